import type {
  AnyPolicyProvider,
  EvictionPolicy,
  KeepDecision,
  LayerObservation,
  ReadSelector,
} from '@lethe/kv-cache';
import { h2oProvider, questProvider, streamingLlmProvider } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type PolicyMatrixCase,
  PolicyMatrixFailure,
  policyMatrixCases,
  runPolicyMatrix,
} from '../../src/testing/index';

// The kit proves itself: a sound provider passes every case, and each way of breaking the policy
// contract fails the case that checks it, with the check named.
beforeAll(() => initBackend('cpu'));

/** `provider` with its eviction policy's `select` replaced by `select(policy, observation, rng)`. */
function withSelect(
  provider: AnyPolicyProvider,
  name: string,
  select: (
    policy: EvictionPolicy,
    observation: LayerObservation,
    rng: unknown,
    state: unknown,
  ) => KeepDecision,
): AnyPolicyProvider {
  return {
    ...provider,
    name,
    build(request) {
      const set = provider.build(request);
      const inner = set.eviction!;
      const eviction: EvictionPolicy = {
        name,
        needs: inner.needs,
        anchors: inner.anchors,
        ...(inner.createState === undefined ? {} : { createState: () => inner.createState!() }),
        shouldEvict: (context, state) => inner.shouldEvict(context, state),
        select: (observation, rng, state) => select(inner, observation, rng, state),
      };
      return { ...set, eviction };
    },
  };
}

/** Every live index of every head: a policy that never evicts. */
function keepAll(observation: LayerObservation): KeepDecision {
  return {
    granularity: 'head',
    keep: Array.from(observation.liveCounts, (live) =>
      Int32Array.from({ length: live }, (_, i) => i),
    ),
  };
}

/** Quest's provider with its selector's `selectPages` replaced by `pick(quest, observation, query)`. */
function withPages(
  name: string,
  pick: (
    quest: ReadSelector,
    observation: LayerObservation,
    query: Float32Array,
  ) => readonly Int32Array[] | undefined,
): AnyPolicyProvider {
  const provider: AnyPolicyProvider = questProvider;
  return {
    ...provider,
    name,
    build(request) {
      const quest = provider.build(request).readSelector!;
      const readSelector: ReadSelector = {
        name,
        needs: quest.needs,
        pageSize: quest.pageSize,
        selectPages: (observation, query) => pick(quest, observation, query),
      };
      return { readSelector };
    },
  };
}

/** Every page of every head: a selector that reads densely, page by page. */
function everyPage(observation: LayerObservation, pageSize: number): Int32Array[] {
  return Array.from(observation.liveCounts, (live) =>
    Int32Array.from({ length: Math.ceil(live / pageSize) }, (_, p) => p),
  );
}

async function failureOf(
  cases: PolicyMatrixCase[],
  loop: string,
  mode = 'defaults',
): Promise<PolicyMatrixFailure> {
  const found = cases.find((c) => c.loop === loop && c.mode === mode)!;
  const error = await found.run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PolicyMatrixFailure);
  return error as PolicyMatrixFailure;
}

describe('policyMatrixCases', () => {
  it('passes a sound provider in every mode it takes, on both loops', async () => {
    const cases = policyMatrixCases(h2oProvider);
    expect(new Set(cases.map((c) => c.loop))).toEqual(new Set(['KVCache loop', 'generate()']));
    expect(cases.map((c) => c.mode)).toContain('adakv');
    expect(await runPolicyMatrix(streamingLlmProvider)).toBeGreaterThanOrEqual(8);
  });

  it('fails a policy that keeps everything: within budget', async () => {
    const cases = policyMatrixCases(
      withSelect(streamingLlmProvider, 'hoarder', (_, o) => keepAll(o)),
    );
    expect((await failureOf(cases, 'KVCache loop')).check).toBe('within budget');
    expect((await failureOf(cases, 'generate()')).check).toBe('within budget');
  });

  it('fails a policy that keeps an entry twice: valid keep indices', async () => {
    const twice = withSelect(streamingLlmProvider, 'twice', (inner, o, rng, state) => {
      const decision = inner.select(o, rng as never, state);
      if (decision.granularity !== 'head') throw new Error('per-head expected');
      return {
        granularity: 'head',
        keep: decision.keep.map((set) => Int32Array.from([set[0]!, ...set])),
      };
    });
    const cases = policyMatrixCases(twice);
    expect((await failureOf(cases, 'KVCache loop')).check).toBe('valid keep indices');
    // generate() checks a decision itself before the matrix sees it
    const generate = cases.find((c) => c.loop === 'generate()' && c.mode === 'defaults')!;
    await expect(generate.run()).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'decision.keep',
    });
  });

  it('fails a policy whose choices leak between sequences: a sequence alone ends as in the batch', async () => {
    let rounds = 0; // shared by every sequence: the policy's object, not its per-sequence state
    const leaky = withSelect(streamingLlmProvider, 'leaky', (inner, o, rng, state) => {
      rounds++;
      const decision = inner.select(o, rng as never, state);
      if (decision.granularity !== 'head' || rounds % 3 !== 0) return decision;
      // every third round (counted across sequences) keeps one entry fewer in head 0
      const [first, ...rest] = decision.keep;
      return {
        granularity: 'head',
        keep: [first!.subarray(0, Math.max(2, first!.length - 1)), ...rest],
      };
    });
    const failure = await failureOf(policyMatrixCases(leaky), 'KVCache loop');
    expect(failure.check).toMatch(/same seed, same result|a sequence alone ends as in the batch/);
  });

  it('passes Quest in its read modes, on both loops', async () => {
    const cases = policyMatrixCases(questProvider);
    expect(cases.map((c) => `${c.mode} × ${c.loop}`)).toEqual([
      'read-defaults × KVCache loop',
      'read-defaults × generate()',
      'read-group-sum × KVCache loop',
      'read-group-sum × generate()',
    ]);
    expect(await runPolicyMatrix(questProvider)).toBe(4);
  });

  it('fails a selector that reads every page: within the read budget', async () => {
    const cases = policyMatrixCases(withPages('every-page', (q, o) => everyPage(o, q.pageSize)));
    for (const loop of ['KVCache loop', 'generate()']) {
      const failure = await failureOf(cases, loop, 'read-defaults');
      expect(failure.check).toBe('within the read budget');
      expect(failure.where).toMatch(loop === 'generate()' ? /decode step/ : /layer/);
    }
  });

  it('fails a selector that skips the newest page, or names a page the head does not hold', async () => {
    // Quest's choice without its newest page
    const oldest = withPages('oldest', (q, o, query) =>
      q.selectPages(o, query)?.map((list) => list.filter((p) => p !== Math.max(...list))),
    );
    const stale = withPages('beyond', (q, o, query) =>
      q.selectPages(o, query)?.map((list) => Int32Array.of(...list, list.length * 100)),
    );
    const of = async (provider: AnyPolicyProvider) =>
      (await failureOf(policyMatrixCases(provider), 'KVCache loop', 'read-defaults')).check;
    expect(await of(oldest)).toBe('reads the newest page');
    expect(await of(stale)).toBe('valid pages');
  });

  it('refuses a learned provider without a fixture rather than skipping it', () => {
    const learned = { ...h2oProvider, name: 'learned', learned: { load: async () => undefined } };
    expect(() => policyMatrixCases(learned)).toThrow(/needs a fixture/);
  });
});
