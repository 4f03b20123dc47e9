import type { EvictionPolicy, KeepDecision, KVCacheStore, ObservationNeeds } from '@lethe/kv-cache';
import { expectThat } from './matrix-failure';
import type { MatrixMode } from './matrix-modes';

/** What a loop leaves per sequence: the live positions of every (layer, head) at the end. */
export type FinalPositions = number[][][];

const POSITIONS_ONLY: ObservationNeeds = {
  attentionWindow: 0,
  accumulatedAttention: false,
  keys: false,
  values: false,
  hidden: false,
};

/**
 * Checks a cache against the budget: every head (or, for AdaKV, every layer on average) holds at
 * most `bound` entries (see `modeBound`).
 */
export function expectWithinBudget(
  cache: KVCacheStore,
  bound: number,
  mode: MatrixMode,
  where: string,
): void {
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    const live = [...cache.liveCounts(layer)];
    const detail = () => `layer ${layer} holds ${live} entries per head, the bound is ${bound}`;
    if (mode.perLayerBound) {
      const total = live.reduce((a, b) => a + b, 0);
      expectThat(total <= bound * live.length, 'within budget', where, detail);
    } else {
      expectThat(
        live.every((count) => count <= bound),
        'within budget',
        where,
        detail,
      );
    }
  }
}

/** Checks that a decision's indices are integers in range, increasing, without repeats. */
export function expectValidDecision(
  decision: KeepDecision,
  liveCounts: Int32Array,
  where: string,
): void {
  const layer = decision.granularity === 'layer';
  const sets = layer ? [decision.keep] : decision.keep;
  expectThat(
    sets.length === (layer ? 1 : liveCounts.length),
    'one keep set per head',
    where,
    () => `${sets.length} sets for ${liveCounts.length} heads (${decision.granularity})`,
  );
  sets.forEach((set, h) => {
    const live = liveCounts[layer ? 0 : h]!;
    for (let i = 0; i < set.length; i++) {
      const index = set[i]!;
      expectThat(
        Number.isInteger(index) && index >= 0 && index < live && (i === 0 || index > set[i - 1]!),
        'valid keep indices',
        where,
        () => `head ${h} keeps [${[...set]}] of ${live} live entries`,
      );
    }
  });
}

/** Checks that every head still holds its anchors: sinks (positions below) and the newest `window`. */
export function expectAnchorsKept(
  cache: KVCacheStore,
  layer: number,
  policy: EvictionPolicy,
  where: string,
): void {
  const { sinks, window } = policy.anchors;
  const observation = cache.observe(layer, POSITIONS_ONLY);
  for (let h = 0; h < observation.kvHeads; h++) {
    const from = h * observation.maxLive;
    const to = from + observation.liveCounts[h]!;
    const row = [...observation.positions.subarray(from, to)];
    const ages = [...observation.ages.subarray(from, to)];
    // Every token ever appended below the sinks bound is a sink: positions here are 0, 1, 2, …
    for (let p = 0; p < Math.min(sinks, observation.step); p++) {
      expectThat(
        row.includes(p),
        'sinks kept',
        where,
        () => `layer ${layer} head ${h} lost sink ${p}: [${row}]`,
      );
    }
    const recent = ages.filter((age) => age < window).length;
    expectThat(
      recent === Math.min(window, observation.step),
      'window kept',
      where,
      () => `layer ${layer} head ${h} holds ${recent} of the newest ${window}: ages [${ages}]`,
    );
  }
}

/** The live positions of every (layer, head) of `cache`. */
export function finalPositions(cache: KVCacheStore): FinalPositions {
  return Array.from({ length: cache.geometry.layers }, (_, layer) => {
    const view = cache.observe(layer, POSITIONS_ONLY);
    return Array.from({ length: view.kvHeads }, (_, h) => [
      ...view.positions.subarray(h * view.maxLive, h * view.maxLive + view.liveCounts[h]!),
    ]);
  });
}

/**
 * The L2 norms of the live keys of every (layer, head) of `cache`, ascending (read where the keys
 * are: `observeAsync` when the cache has it, a device cache's keys living on its device).
 */
export async function liveKeyNorms(cache: KVCacheStore): Promise<number[][][]> {
  const needs = { ...POSITIONS_ONLY, keys: true };
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

/** Checks that every (layer, head) of `cache` holds all `fed` tokens: nothing was evicted. */
export function expectEveryEntryKept(cache: KVCacheStore, fed: number, where: string): void {
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    const live = [...cache.liveCounts(layer)];
    expectThat(
      live.every((n) => n === fed),
      'every entry kept',
      where,
      () => `layer ${layer} holds [${live}] of ${fed}`,
    );
  }
}
