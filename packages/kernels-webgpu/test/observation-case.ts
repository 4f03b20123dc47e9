import {
  type KeepDecision,
  KVCache,
  type KVCacheOptions,
  type ObservationNeeds,
} from '@lethe/kv-cache';
import { mulberry32 } from '@lethe/test-utils/random';
import { DeviceKVCache } from '../src/index';
import { AccumulationBounds, observedRow } from './observation-reference';

export interface ObservationCase {
  readonly kvHeads: number;
  readonly group: number;
  readonly headDim: number;
  readonly pageSize: number;
  readonly queryWindow: number;
  /** Per step: tokens appended (their queries recorded), then the fraction an eviction round keeps (none: no round). */
  readonly steps: readonly { readonly tokens: number; readonly keep: number | null }[];
  readonly spread: number;
  readonly seed: number;
  /** The caches store gates (some of them 0). */
  readonly gated?: boolean;
}

export const NEEDS = (window: number): ObservationNeeds => ({
  attentionWindow: window,
  accumulatedAttention: true,
  keys: true,
  values: true,
  hidden: false,
});

/**
 * Feeds a case to a `DeviceKVCache` and a host `KVCache` (both tracking attention) side by side
 * and compares what a policy observes: the bookkeeping exactly, the counts exactly, the window's
 * attention and the accumulated attention within the float32 bounds of `observation-reference`.
 * Returns the largest `|error| / bound` and the fields that differ where they must be equal.
 */
export async function checkObservation(device: GPUDevice, c: ObservationCase) {
  const random = mulberry32(c.seed);
  const draw = (scale: number) => Math.fround((random() * 2 - 1) * scale);
  const queryHeads = c.kvHeads * c.group;
  const options: KVCacheOptions = {
    geometry: { layers: 1, kvHeads: c.kvHeads, headDim: c.headDim, pageSize: c.pageSize },
    queryHeads,
    queryWindow: c.queryWindow,
    trackAttention: true,
    storeGates: c.gated === true,
    trace: false,
  };
  const cache = new DeviceKVCache(options, device);
  const host = new KVCache(options);
  const bounds = new AccumulationBounds();
  try {
    let position = 0;
    for (const step of c.steps) {
      const floats = (n: number, scale: number) =>
        Float32Array.from({ length: n }, () => draw(scale));
      const keys = floats(step.tokens * c.kvHeads * c.headDim, c.spread);
      const values = floats(step.tokens * c.kvHeads * c.headDim, 1);
      const queries = floats(step.tokens * queryHeads * c.headDim, c.spread);
      const positions = Int32Array.from({ length: step.tokens }, (_, i) => position + i);
      position += step.tokens;
      const gates =
        c.gated === true
          ? Float32Array.from({ length: step.tokens * c.kvHeads }, () =>
              random() < 0.1 ? 0 : random(),
            )
          : undefined;
      for (const target of [cache, host]) target.append(0, keys, values, positions, gates);
      bounds.record(host, 0, queries, positions);
      for (const target of [cache, host]) target.recordQueries(0, queries, positions);
      if (step.keep !== null) {
        const decision: KeepDecision = {
          granularity: 'head',
          keep: Array.from(host.liveCounts(0), (n) =>
            Int32Array.from({ length: n }, (_, i) => i).filter(() => random() < step.keep!),
          ),
        };
        for (const target of [cache, host]) target.keep(0, decision);
      }
    }
    const got = await cache.observeAsync(0, NEEDS(c.queryWindow));
    const want = host.observe(0, NEEDS(c.queryWindow));
    const mismatches: string[] = [];
    const same = (
      a: ArrayLike<number> | number | undefined,
      b: ArrayLike<number> | number | undefined,
    ) =>
      typeof a === 'number' || typeof b === 'number' || a === undefined || b === undefined
        ? a === b
        : a.length === b.length && Array.from(a).every((x, i) => x === b[i]);
    for (const field of [
      'liveCounts',
      'positions',
      'ages',
      'keys',
      'values',
      'gates',
      'queries',
      'attentionCounts',
      'window',
      'maxLive',
      'step',
    ] as const) {
      if (!same(got[field], want[field])) mismatches.push(field);
    }
    for (const field of ['attention', 'accumulatedAttention'] as const) {
      if (got[field]?.length !== want[field]?.length) mismatches.push(`${field}.length`);
    }
    if (mismatches.length > 0) return { worst: Number.POSITIVE_INFINITY, mismatches };
    let worst = 0;
    const note = (error: number, bound: number) => {
      worst = Math.max(worst, error === 0 ? 0 : error / bound);
    };
    const recent = host.recentQueries(0, c.queryWindow);
    const view = host.view(0);
    for (let k = 0; k < want.window; k++) {
      for (let q = 0; q < queryHeads; q++) {
        const at = (k * queryHeads + q) * c.headDim;
        const row = observedRow(
          host,
          view,
          want.queries!.subarray(at, at + c.headDim),
          q,
          recent.positions[k]!,
        );
        for (let i = 0; i < want.maxLive; i++) {
          const index = (k * queryHeads + q) * want.maxLive + i;
          const expected = row.probabilities[i] ?? 0;
          // the reference agrees with the host cache's own attention (float32, the cache kernel's arithmetic)
          if (!(Math.abs(want.attention![index]! - expected) < 1e-6)) mismatches.push('reference');
          note(Math.abs(got.attention![index]! - expected), row.tolerance[i] ?? 0);
        }
      }
    }
    for (let h = 0; h < c.kvHeads; h++) {
      for (let i = 0; i < want.liveCounts[h]!; i++) {
        const index = h * want.maxLive + i;
        const expected = want.accumulatedAttention![index]!;
        const bound = bounds.tolerance(h, want.positions[index]!, expected);
        note(Math.abs(got.accumulatedAttention![index]! - expected), bound);
      }
    }
    return { worst, mismatches };
  } finally {
    cache.dispose();
  }
}
