import {
  type AnyPolicyProvider,
  type EvictionPolicy,
  FULL_CACHE,
  fullCacheProvider,
  NO_NEEDS,
  type PolicyContext,
  requireCapacityBudget,
} from '@lethe/kv-cache';
import {
  HEURISTIC_NAMES,
  HEURISTIC_PROVIDERS,
  SnapKVPolicy,
  StreamingLLMPolicy,
} from '@lethe/policies-heuristic';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { createDefaultRegistry, DEFAULT_PROVIDERS } from '../src/index';

/** The context of a two-layer model with one KV head of two query heads (no model needed). */
const context: PolicyContext = {
  model: { layers: 2, kvHeads: 1, queryHeads: 2, headDim: 8, hiddenSize: 16, vocabSize: 40 },
  sequences: 2,
};

/** A user policy that never evicts. */
const keepAll: EvictionPolicy = {
  name: 'never',
  needs: NO_NEEDS,
  anchors: { sinks: 0, window: 0 },
  shouldEvict: () => false,
  select: () => {
    throw new Error('never asked');
  },
};

function userProvider(name: string, seen: number[] = []): AnyPolicyProvider {
  return {
    name,
    summary: 'keeps everything',
    options: fullCacheProvider.options,
    build: ({ budget }) => {
      seen.push(requireCapacityBudget(budget, name).capacity);
      return { eviction: keepAll };
    },
  };
}

describe('the default registry', () => {
  it('holds full, every heuristic, NGC, NAMM, GSA, SOL and its baselines, in that order', () => {
    const registry = createDefaultRegistry();
    expect(registry.names()).toEqual([
      FULL_CACHE,
      ...HEURISTIC_NAMES,
      'ngc',
      'namm',
      'gsa',
      'sol',
      'sol-fixed',
      'sol-random',
      'sol-random-steered',
      'sol-emc',
      'sol-dac',
    ]);
    expect(HEURISTIC_NAMES).toHaveLength(9);
    expect(HEURISTIC_NAMES.at(-1)).toBe('quest');
    expect(registry.list()).toEqual([...DEFAULT_PROVIDERS]);
    expect(DEFAULT_PROVIDERS.slice(1, 10)).toEqual([...HEURISTIC_PROVIDERS]);
  });

  it('prepares the full cache as the empty policy set', async () => {
    const full = await createDefaultRegistry().prepare(FULL_CACHE);
    expect(full.build({ capacity: 10 }, context)).toEqual({});
  });

  it('prepares and builds every heuristic under its own name', async () => {
    const registry = createDefaultRegistry();
    for (const name of HEURISTIC_NAMES) {
      const prepared = await registry.prepare(name);
      expect(prepared.name).toBe(name);
      expect(prepared.model).toBeUndefined();
      if (name === 'quest') {
        // a read selector: it evicts nothing, each step reads ⌊32 / 16⌋ pages, 3 at least
        expect(prepared.budgetForms).toEqual(['read']);
        const set = prepared.build({ readTokens: 32 }, context);
        expect([set.eviction, set.readSelector?.name]).toEqual([undefined, 'quest']);
        continue;
      }
      const { eviction } = prepared.build({ capacity: 32 }, context);
      expect(eviction?.name).toBe(name);
    }
  });

  it('builds heuristics that keep capacity − 1 per round as soon as the ceiling is reached', async () => {
    const registry = createDefaultRegistry();
    const streaming = (await registry.prepare('streaming-llm')).build({ capacity: 40 }, context)
      .eviction as StreamingLLMPolicy;
    expect(streaming).toBeInstanceOf(StreamingLLMPolicy);
    // the ceiling 40 becomes the selection budget: rounds keep 39
    expect(streaming.budget).toEqual({ keepCount: 39 });
    expect(streaming.trigger).toEqual({ whenLiveExceeds: 39, slack: 0 });
    const snap = (await registry.prepare('snapkv')).build({ capacity: 40 }, context)
      .eviction as SnapKVPolicy;
    expect(snap).toBeInstanceOf(SnapKVPolicy);
    expect(snap.windowSize).toBe(9); // ⌊39 / 4⌋
    const wide = (await registry.prepare('snapkv', { options: { windowSize: 6 } })).build(
      { capacity: 40 },
      context,
    ).eviction as SnapKVPolicy;
    expect(wide.windowSize).toBe(6);
  });

  it('builds heuristics for a rate schedule: keep a fraction every n tokens, defaults scaled by n', async () => {
    const registry = createDefaultRegistry();
    const rate = { keepRatio: 0.7, every: 16 };
    for (const name of HEURISTIC_NAMES.filter((n) => n !== 'quest')) {
      const { eviction } = (await registry.prepare(name)).build(rate, context);
      const policy = eviction as StreamingLLMPolicy;
      expect([policy.budget, policy.trigger]).toEqual([{ keepRatio: 0.7 }, { every: 16 }]);
    }
    const streaming = (await registry.prepare('streaming-llm')).build(rate, context)
      .eviction as StreamingLLMPolicy;
    expect(streaming.anchors).toEqual({ sinks: 4, window: 0 });
    const snap = (await registry.prepare('snapkv')).build(rate, context).eviction as SnapKVPolicy;
    expect(snap.windowSize).toBe(4); // ⌊16 / 4⌋
    for (const options of [{ cadence: 8 }, { slackFraction: 0.5 }]) {
      const prepared = await registry.prepare('h2o', { options });
      expectLetheError(
        () => prepared.build(rate, context),
        'E_BUDGET',
        `options.${Object.keys(options)[0]}`,
      );
    }
    const full = await registry.prepare('full');
    expect(full.build(rate, context)).toEqual({});
    // Quest keeps every entry: a rate schedule means nothing to it
    const quest = await registry.prepare('quest');
    expectLetheError(() => quest.build(rate, context), 'E_BUDGET', 'budget');
  });

  it('sets the trigger slack to ceil(slackFraction · capacity)', async () => {
    const registry = createDefaultRegistry();
    const slack = async (name: string, slackFraction: number, capacity: number) => {
      const prepared = await registry.prepare(name, { options: { slackFraction } });
      expect(prepared.options.slackFraction).toBe(slackFraction);
      const { eviction } = prepared.build({ capacity }, context);
      return (eviction as StreamingLLMPolicy).trigger;
    };
    expect(await slack('streaming-llm', 0.0625, 40)).toEqual({ whenLiveExceeds: 39, slack: 3 });
    expect(await slack('h2o', 0.1, 8)).toEqual({ whenLiveExceeds: 7, slack: 1 });
    expect(await slack('h2o', 0, 8)).toEqual({ whenLiveExceeds: 7, slack: 0 });
    await expectLetheRejection(
      registry.prepare('h2o', { options: { slackFraction: -1 } }),
      'E_ARG',
      'options.slackFraction',
    );
  });

  it('refuses bad options naming them', async () => {
    const registry = createDefaultRegistry();
    await expectLetheRejection(
      registry.prepare('snapkv', { options: { windowSize: 0 } }),
      'E_ARG',
      'options.windowSize',
    );
    await expectLetheRejection(
      registry.prepare('knorm', { options: { windowsize: 4 } }),
      'E_ARG',
      'options.windowsize',
    );
    await expectLetheRejection(registry.prepare('h2o', { options: [1] }), 'E_ARG', 'options');
  });

  it('refuses NGC without a policy directory', async () => {
    await expectLetheRejection(createDefaultRegistry().prepare('ngc'), 'E_ARG', 'policyDir');
  });

  it('rejects an unknown name with E_ARG listing the valid names', async () => {
    const registry = createDefaultRegistry();
    const error = await expectLetheRejection(registry.prepare('h2x'), 'E_ARG', 'policy');
    for (const name of registry.names()) expect(error.message).toContain(name);
  });

  it('rejects bad capacities', async () => {
    const h2o = await createDefaultRegistry().prepare('h2o');
    expectLetheError(() => h2o.build({ capacity: 0 }, context), 'E_BUDGET', 'budget.capacity');
    expectLetheError(() => h2o.build({ capacity: 2.5 }, context), 'E_BUDGET', 'budget.capacity');
  });

  it('builds only the budget forms a provider declares', async () => {
    const targets = { tokenKeep: 0.5, mlpInputKeep: 1, precision: 1 };
    const h2o = await createDefaultRegistry().prepare('h2o');
    expect(h2o.budgetForms).toEqual(['capacity', 'rate']);
    expectLetheError(() => h2o.build({ targets }, context), 'E_BUDGET', 'budget');
    const computeOnly: AnyPolicyProvider = {
      ...userProvider('compute-only'),
      budgetForms: ['compute'],
      build: () => ({}),
    };
    const prepared = await createDefaultRegistry([computeOnly]).prepare('compute-only');
    expect(prepared.build({ targets }, context)).toEqual({});
    expectLetheError(() => prepared.build({ capacity: 8 }, context), 'E_BUDGET', 'budget');
    // a read budget: only a provider that lists the form builds for it
    expectLetheError(() => h2o.build({ readTokens: 8 }, context), 'E_BUDGET', 'budget');
    expectLetheError(() => prepared.build({ readTokens: 8 }, context), 'E_BUDGET', 'budget');
    const readOnly: AnyPolicyProvider = {
      ...computeOnly,
      name: 'read-only',
      budgetForms: ['read'],
    };
    const reader = await createDefaultRegistry([readOnly]).prepare('read-only');
    expect(reader.budgetForms).toEqual(['read']);
    expect(reader.build({ readTokens: 8 }, context)).toEqual({});
    expectLetheError(() => reader.build({ capacity: 8 }, context), 'E_BUDGET', 'budget');
    expectLetheError(() => reader.build({ targets }, context), 'E_BUDGET', 'budget');
    expectLetheError(
      () => reader.build({ readTokens: 0 }, context),
      'E_BUDGET',
      'budget.readTokens',
    );
    for (const budgetForms of [[], ['memory'], 'compute']) {
      expectLetheError(
        () => createDefaultRegistry([{ ...computeOnly, budgetForms } as AnyPolicyProvider]),
        'E_ARG',
        `providers[${DEFAULT_PROVIDERS.length}].budgetForms`,
      );
    }
  });

  it('reaches a user provider given after the defaults, per registry', async () => {
    const seen: number[] = [];
    const registry = createDefaultRegistry([userProvider('never', seen)]);
    expect(registry.has('never')).toBe(true);
    expect(registry.names().at(-1)).toBe('never');
    const prepared = await registry.prepare('never');
    // a capacity budget's set carries its ceiling (what runtimes bound prefill chunks by)
    expect(prepared.build({ capacity: 12 }, context)).toEqual({ eviction: keepAll, ceiling: 12 });
    expect(seen).toEqual([12]);
    // a rate schedule bounds nothing; the full cache evicts nothing
    const h2o = await registry.prepare('h2o');
    expect(h2o.build({ keepRatio: 0.5, every: 4 }, context).ceiling).toBeUndefined();
    expect(h2o.build({ capacity: 9 }, context).ceiling).toBe(9);
    const full = await registry.prepare(FULL_CACHE);
    expect(full.build({ capacity: 12 }, context).ceiling).toBeUndefined();
    expect(createDefaultRegistry().has('never')).toBe(false);
  });

  it('releases a learned provider’s parameters once, through PreparedPolicy.release', async () => {
    const released: string[] = [];
    const learned: AnyPolicyProvider = {
      ...userProvider('learned-keep-all'),
      learned: {
        load: async (directory) => `weights of ${directory.files.location}`,
        release: (parameters: string) => released.push(parameters),
      },
    };
    const registry = createDefaultRegistry([learned]);
    const directory = {
      files: {
        location: 'memory:x',
        readText: async () => '',
        readBytes: async () => new Uint8Array(),
      },
      manifest: { format: 'lethe-policy', version: 1, provider: 'learned-keep-all', options: {} },
    } as const;
    const prepared = await registry.prepare('learned-keep-all', { directory });
    prepared.release();
    prepared.release();
    expect(released).toEqual(['weights of memory:x']);
    // A heuristic has nothing to release; its release is a no-op.
    const h2o = await createDefaultRegistry().prepare('h2o');
    expect(h2o.release()).toBeUndefined();
  });

  it('rejects name clashes and malformed providers', () => {
    const n = DEFAULT_PROVIDERS.length;
    expectLetheError(
      () => createDefaultRegistry([userProvider('h2o')]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider(FULL_CACHE)]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider('ok'), userProvider('ok')]),
      'E_ARG',
      `providers[${n + 1}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider('Bad Name')]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([3 as unknown as AnyPolicyProvider]),
      'E_ARG',
      `providers[${n}]`,
    );
  });
});
