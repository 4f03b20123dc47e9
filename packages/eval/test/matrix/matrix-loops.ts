import {
  type ComputePolicy,
  type EvictionPolicy,
  type KeepDecision,
  KVCache,
  type KVCacheStore,
  type LayerControls,
  type PolicyContext,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import { type DecoderModel, generate, policyContextOf, releaseCache } from '@lethe/model';
import { Rng, tf } from '@lethe/tensor';
import { expect } from 'vitest';
import { type MatrixMode, modeBound, modeBudget } from './matrix-cases';

/** Geometry of the KVCache loop. */
const LAYERS = 2;
const KV_HEADS = 2;
const QUERY_HEADS = 4;
const HEAD_DIM = 8;
const HIDDEN = 16;

/** What a loop leaves per sequence: the live positions of every (layer, head) at the end. */
export type FinalPositions = number[][][];

/** The context of a batch of `sequences` on the KVCache loop's model shape. */
export function loopContext(sequences: number): PolicyContext {
  return {
    model: {
      layers: LAYERS,
      kvHeads: KV_HEADS,
      queryHeads: QUERY_HEADS,
      headDim: HEAD_DIM,
      hiddenSize: HIDDEN,
    },
    sequences,
  };
}

/**
 * Checks a cache against the budget after an append: every head (or, for AdaKV, every layer on
 * average) holds at most `bound` entries (see `modeBound`).
 */
export function expectWithinBudget(
  cache: KVCacheStore,
  bound: number,
  mode: MatrixMode,
  where: string,
): void {
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    const live = [...cache.liveCounts(layer)];
    if (mode.perLayerBound) {
      const total = live.reduce((a, b) => a + b, 0);
      expect(total, `${where}: layer ${layer} holds ${live}`).toBeLessThanOrEqual(
        bound * live.length,
      );
    } else {
      for (const count of live) {
        expect(count, `${where}: layer ${layer} holds ${live}`).toBeLessThanOrEqual(bound);
      }
    }
  }
}

/** Checks that a decision's indices are integers in range, increasing, without repeats. */
function expectValidDecision(decision: KeepDecision, liveCounts: Int32Array): void {
  const sets = decision.granularity === 'layer' ? [decision.keep] : decision.keep;
  expect(sets.length).toBe(decision.granularity === 'layer' ? 1 : liveCounts.length);
  sets.forEach((set, h) => {
    const live = liveCounts[decision.granularity === 'layer' ? 0 : h]!;
    for (let i = 0; i < set.length; i++) {
      expect(Number.isInteger(set[i]) && set[i]! >= 0 && set[i]! < live).toBe(true);
      if (i > 0) expect(set[i]!).toBeGreaterThan(set[i - 1]!);
    }
  });
}

/** Checks that a head still holds its anchors: sinks (positions below) and the newest `window`. */
function expectAnchorsKept(cache: KVCacheStore, layer: number, policy: EvictionPolicy): void {
  const { sinks, window } = policy.anchors;
  const observation = cache.observe(layer, {
    attentionWindow: 0,
    accumulatedAttention: false,
    keys: false,
    values: false,
    hidden: false,
  });
  for (let h = 0; h < observation.kvHeads; h++) {
    const row = [...observation.positions.subarray(h * observation.maxLive)].slice(
      0,
      observation.liveCounts[h],
    );
    const ages = [...observation.ages.subarray(h * observation.maxLive)].slice(
      0,
      observation.liveCounts[h],
    );
    // Every token ever appended below the sinks bound is a sink: positions here are 0, 1, 2, …
    for (let p = 0; p < Math.min(sinks, observation.step); p++) expect(row).toContain(p);
    const recent = ages.filter((age) => age < window).length;
    expect(recent).toBe(Math.min(window, observation.step));
  }
}

/**
 * The KVCache loop: the sequences run interleaved token by token — each with its own cache,
 * random stream and policy state, all sharing one policy object — over `steps` tokens of random
 * keys, values and queries (and gates, for a gated policy), with the policy's rounds after every token. Checks the budget after
 * every append, the decision's indices and the anchors after every round.
 */
export function kvCacheLoop(
  policy: EvictionPolicy,
  seeds: readonly number[],
  steps: number,
  capacity: number,
  mode: MatrixMode,
): FinalPositions[] {
  const runs = seeds.map((seed) => ({
    cache: new KVCache({
      geometry: { layers: LAYERS, kvHeads: KV_HEADS, headDim: HEAD_DIM },
      queryHeads: QUERY_HEADS,
      anchors: policy.anchors,
      queryWindow: policy.needs.attentionWindow,
      trackAttention: policy.needs.accumulatedAttention,
      storeGates: policy.gate !== undefined,
    }),
    data: new Rng(seed),
    choices: new Rng(seed).fork('policy'),
    state: policy.createState?.(),
    since: new Int32Array(LAYERS),
  }));
  for (let t = 0; t < steps; t++) {
    for (const run of runs) {
      const { cache, data } = run;
      const positions = Int32Array.of(t);
      for (let layer = 0; layer < LAYERS; layer++) {
        cache.append(
          layer,
          data.normal(KV_HEADS * HEAD_DIM),
          data.normal(KV_HEADS * HEAD_DIM),
          positions,
          // A gated policy (GSA) ranks by the gate the model would have stored: random in (0, 1).
          policy.gate === undefined
            ? undefined
            : data.uniform(KV_HEADS).map((u) => 0.01 + 0.98 * u),
        );
        cache.recordQueries(layer, data.normal(QUERY_HEADS * HEAD_DIM), positions);
      }
      expectWithinBudget(cache, modeBound(mode, capacity, policy), mode, `token ${t}`);
      const hidden = data.normal(HIDDEN);
      for (let layer = 0; layer < LAYERS; layer++) {
        run.since[layer]! += 1;
        const context = {
          layer,
          step: cache.length(layer),
          liveCounts: cache.liveCounts(layer),
          sinceLastRound: run.since[layer]!,
        };
        if (!policy.shouldEvict(context, run.state)) continue;
        const observation = cache.observe(
          layer,
          policy.needs,
          policy.needs.hidden ? hidden : undefined,
        );
        const decision = policy.select(observation, run.choices, run.state);
        expectValidDecision(decision, observation.liveCounts);
        cache.keep(layer, decision);
        run.since[layer] = 0;
        expectAnchorsKept(cache, layer, policy);
      }
    }
  }
  return runs.map(({ cache }) => finalPositions(cache));
}

/** The live positions of every (layer, head) of `cache`. */
export function finalPositions(cache: KVCacheStore): FinalPositions {
  return Array.from({ length: cache.geometry.layers }, (_, layer) => {
    const view = cache.observe(layer, {
      attentionWindow: 0,
      accumulatedAttention: false,
      keys: false,
      values: false,
      hidden: false,
    });
    return Array.from({ length: view.kvHeads }, (_, h) => [
      ...view.positions.subarray(h * view.maxLive, h * view.maxLive + view.liveCounts[h]!),
    ]);
  });
}

/** What one `generate()` run of the matrix produced. */
export interface GenerateOutcome {
  readonly tokens: number[][];
  readonly positions: FinalPositions[];
  /** The L2 norms of the live keys of every (sequence, layer, head), ascending. */
  readonly keyNorms: number[][][][];
}

/**
 * The L2 norms of the live keys of every (layer, head) of `cache`, ascending (read where the keys
 * are: `observeAsync` when the cache has it, a device cache's keys living on its device).
 */
async function liveKeyNorms(cache: KVCacheStore): Promise<number[][][]> {
  const needs = {
    attentionWindow: 0,
    accumulatedAttention: false,
    keys: true,
    values: false,
    hidden: false,
  };
  const norms: number[][][] = [];
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    const view = await (cache.observeAsync?.(layer, needs) ?? cache.observe(layer, needs));
    const d = view.headDim;
    norms.push(
      Array.from({ length: view.kvHeads }, (_, h) =>
        Array.from({ length: view.liveCounts[h]! }, (_, i) => {
          const at = (h * view.maxLive + i) * d;
          return Math.hypot(...view.keys!.subarray(at, at + d));
        }).sort((a, b) => a - b),
      ),
    );
  }
  return norms;
}

/**
 * The `generate()` loop: greedy decoding of `prompts` on `model` under the prepared policy built
 * for the batch, prompts fed one token at a time, with the budget checked before every step and
 * at the end, every round's decision and anchors checked, and no tensor left behind.
 */
export async function generateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  capacity: number,
  mode: MatrixMode,
): Promise<GenerateOutcome> {
  const context = policyContextOf(model, prompts.length);
  const { eviction } = prepared.build(modeBudget(mode, capacity), context);
  if (eviction === undefined) throw new Error(`${prepared.name} built no eviction policy`);
  const bound = modeBound(mode, capacity, eviction);
  const before = tf.memory().numTensors;
  const result = await generate({
    model,
    prompts,
    streamIds,
    maxNewTokens: 24,
    sampling: { temperature: 0 },
    seed: 5,
    eviction,
    prefillChunk: 1,
    onStep: ({ sequences, caches }) => {
      for (const b of sequences) expectWithinBudget(caches[b]!, bound, mode, 'before a step');
    },
    onEvictionRound: ({ decision, observation }) => {
      expectValidDecision(decision, observation.liveCounts);
    },
  });
  expect(tf.memory().numTensors).toBe(before);
  for (const cache of result.caches) {
    expectWithinBudget(cache, bound, mode, 'at the end');
    for (let layer = 0; layer < cache.geometry.layers; layer++) {
      if (cache.stats().evictionRounds[layer]! > 0) expectAnchorsKept(cache, layer, eviction);
    }
  }
  const positions = result.caches.map(finalPositions);
  const keyNorms = await Promise.all(result.caches.map(liveKeyNorms));
  for (const cache of result.caches) releaseCache(cache);
  return { tokens: result.tokens.map((t) => [...t]), positions, keyNorms };
}

/** One step's controls as plain data: per layer, the knobs set (`{}` for a dense layer). */
type PlainControls = Record<string, number>[];

/** Checks one step's controls: one entry per layer, each knob in its range. */
function expectValidControls(controls: readonly (LayerControls | undefined)[], layers: number) {
  expect(controls.length).toBe(layers);
  for (const layer of controls) {
    if (layer === undefined) continue;
    const { tokenKeep, mlpInputKeep, activationBits } = layer;
    for (const rate of [tokenKeep, mlpInputKeep]) {
      if (rate !== undefined) expect(rate > 0 && rate <= 1, `rate ${rate}`).toBe(true);
    }
    if (activationBits !== undefined) {
      expect(Number.isInteger(activationBits) && activationBits >= 2 && activationBits <= 16).toBe(
        true,
      );
    }
  }
}

function plainControls(controls: readonly (LayerControls | undefined)[]): PlainControls {
  return controls.map((layer) => ({ ...(layer ?? {}) }) as Record<string, number>);
}

/**
 * The controls loop of a compute policy (its KVCache loop): the sequences run interleaved step by
 * step — each with its own random observations (hidden state, embedding when asked for, token),
 * random stream and policy state, all sharing one policy object — for `steps` steps from position
 * `firstStep`; every step's controls are checked. Returns each sequence's controls, step by step.
 */
export function controlsLoop(
  policy: ComputePolicy,
  seeds: readonly number[],
  steps: number,
  shape: { readonly layers: number; readonly hiddenSize: number; readonly vocabSize?: number },
  firstStep: number,
): PlainControls[][] {
  const runs = seeds.map((seed) => ({
    data: new Rng(seed),
    choices: new Rng(seed).fork('policy'),
    state: policy.createState?.(),
    trace: [] as PlainControls[],
  }));
  for (let t = 0; t < steps; t++) {
    for (const run of runs) {
      const observation = {
        step: firstStep + t,
        token: Math.floor(run.data.uniform(1)[0]! * 30),
        hidden: run.data.normal(shape.hiddenSize),
        ...(policy.needs?.embedding ? { embedding: run.data.normal(shape.hiddenSize) } : {}),
        ...(policy.needs?.logits ? { logits: run.data.normal(shape.vocabSize ?? 2) } : {}),
        livePerLayer: new Int32Array(shape.layers).fill(2 * (firstStep + t)),
      };
      const controls = policy.controls(observation, run.choices, run.state);
      expectValidControls(controls, shape.layers);
      run.trace.push(plainControls(controls));
    }
  }
  return runs.map(({ trace }) => trace);
}

/** What one `generate()` run of a compute policy produced. */
export interface ComputeOutcome {
  readonly tokens: number[][];
  /** Each sequence's realised per-axis averages, `[κ̄, ρ̄, η̄]`, and the steps they cover. */
  readonly usage: { steps: number; axes: number[] }[];
  readonly refreshes: number[];
}

/**
 * The `generate()` loop of a compute policy: greedy decoding of `prompts` on `model` under the
 * compute policy built for the batch. Checks: no tensor left behind, the cache keeps every entry
 * (a compute policy evicts nothing), the realised averages in [0, 1] over every decode step, and
 * one KV refresh per `refreshEvery` decode steps.
 */
export async function computeGenerateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  mode: MatrixMode,
): Promise<ComputeOutcome> {
  const context = policyContextOf(model, prompts.length);
  const { compute, eviction } = prepared.build(modeBudget(mode, 2), context);
  if (compute === undefined) throw new Error(`${prepared.name} built no compute policy`);
  expect(eviction).toBeUndefined();
  const before = tf.memory().numTensors;
  const maxNewTokens = 20;
  const result = await generate({
    model,
    prompts,
    streamIds,
    maxNewTokens,
    sampling: { temperature: 0 },
    seed: 5,
    compute,
  });
  expect(tf.memory().numTensors).toBe(before);
  const { stats } = result;
  result.caches.forEach((cache, b) => {
    const fed = prompts[b]!.length + result.tokens[b]!.length - 1;
    for (let layer = 0; layer < cache.geometry.layers; layer++) {
      for (const live of cache.liveCounts(layer)) expect(live).toBe(fed);
    }
    const decodeSteps = result.tokens[b]!.length - 1;
    const usage = stats.compute[b]!;
    expect(usage.steps).toBe(decodeSteps);
    for (const axis of [usage.tokenKeep, usage.mlpInputKeep, usage.precision]) {
      expect(axis >= 0 && axis <= 1).toBe(true);
    }
    const every = compute.refreshEvery;
    expect(stats.refreshes[b]).toBe(every === undefined ? 0 : Math.floor(decodeSteps / every));
  });
  for (const cache of result.caches) releaseCache(cache);
  return {
    tokens: result.tokens.map((t) => [...t]),
    usage: stats.compute.map((u) => ({
      steps: u.steps,
      axes: [u.tokenKeep, u.mlpInputKeep, u.precision],
    })),
    refreshes: [...stats.refreshes],
  };
}
