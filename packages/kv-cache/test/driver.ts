import fc from 'fast-check';
import { cacheGeometry, type KVCache, type KVCacheOptions } from '../src/index';
import { appendTokens, mulberry32 } from './helpers';

/** Options of a random small cache. */
export const optionsArb: fc.Arbitrary<KVCacheOptions> = fc
  .record({
    layers: fc.integer({ min: 1, max: 3 }),
    kvHeads: fc.integer({ min: 1, max: 3 }),
    group: fc.integer({ min: 1, max: 2 }),
    headDim: fc.integer({ min: 1, max: 4 }),
    pageSize: fc.integer({ min: 1, max: 5 }),
    sinks: fc.integer({ min: 0, max: 8 }), // positions are 3 + 2·token: up to tokens 0–2
    window: fc.integer({ min: 0, max: 3 }),
    storeValues: fc.boolean(),
    storeGates: fc.boolean(),
    trackAttention: fc.boolean(),
    trace: fc.boolean(),
    queryWindow: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ layers, kvHeads, group, headDim, pageSize, sinks, window, ...flags }) => ({
    geometry: cacheGeometry({ layers, kvHeads, headDim, pageSize }),
    queryHeads: kvHeads * group,
    anchors: { sinks, window },
    ...flags,
  }));

/** One step of a random workload: append `tokens` to every layer, then maybe evict. */
export interface WorkloadStep {
  readonly tokens: number;
  readonly evict: boolean;
  readonly keepFraction: number;
  readonly perHead: boolean;
}

/** Random workload steps. */
export const workloadArb: fc.Arbitrary<WorkloadStep[]> = fc.array(
  fc.record({
    tokens: fc.integer({ min: 1, max: 4 }),
    evict: fc.boolean(),
    keepFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    perHead: fc.boolean(),
  }),
  { minLength: 0, maxLength: 10 },
);

/** Whether every KV head of `layer` holds the same positions. */
export function headsAgree(cache: KVCache, layer: number): boolean {
  const view = cache.view(layer);
  const first = view.positions.subarray(0, view.maxLive).join(',');
  for (let h = 1; h < view.kvHeads; h++) {
    if (view.positions.subarray(h * view.maxLive, (h + 1) * view.maxLive).join(',') !== first)
      return false;
  }
  return true;
}

/** Runs `steps` on `cache` (queries recorded every step), choosing kept entries with `seed`. */
export function drive(cache: KVCache, steps: readonly WorkloadStep[], seed: number): void {
  const random = mulberry32(seed);
  const pick = (live: number, fraction: number): Int32Array =>
    Int32Array.from({ length: live }, (_, i) => i).filter(() => random() < fraction);
  for (const step of steps) {
    for (let l = 0; l < cache.geometry.layers; l++)
      appendTokens(cache, l, cache.length(l), step.tokens, true);
    if (!step.evict) continue;
    for (let l = 0; l < cache.geometry.layers; l++) {
      const live = cache.liveCounts(l);
      if (step.perHead) {
        cache.keep(l, {
          granularity: 'head',
          keep: Array.from(live, (n) => pick(n, step.keepFraction)),
        });
      } else if (headsAgree(cache, l)) {
        cache.keep(l, { granularity: 'layer', keep: pick(live[0], step.keepFraction) });
      } else {
        cache.keepBlocks(l, 0, pick(Math.ceil(live[0] / 2), step.keepFraction), 2);
      }
    }
  }
}
