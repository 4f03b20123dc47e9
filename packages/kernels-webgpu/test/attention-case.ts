import { type KeepDecision, KVCache, type KVCacheOptions } from '@lethe/kv-cache';
import { mulberry32 } from '@lethe/test-utils/random';
import { DeviceKVCache, destroyGpuBuffer, deviceCounters, readBack } from '../src/index';
import { referenceAttention } from './reference';

export interface Case {
  readonly kvHeads: number;
  readonly group: number;
  readonly headDim: number;
  readonly pageSize: number;
  readonly gated: boolean;
  /** Tokens appended before the eviction round (in chunks of `chunk`). */
  readonly before: number;
  readonly chunk: number;
  /** Fraction of each head's entries kept by the round (ragged: per head). */
  readonly keep: number;
  /** Tokens appended after the round. */
  readonly after: number;
  /** Truncate the last tokens before attending (0: no truncation). */
  readonly truncate: number;
  /** Query tokens (the last ones appended, causally). */
  readonly queries: number;
  readonly sparse: boolean;
  readonly biased: boolean;
  /** The queries are a new chunk's tokens, read with their own keys and values (causally). */
  readonly chunked: boolean;
  readonly spread: number;
  readonly seed: number;
  /** Keep the pages' key bounds on the device (`pageBounds`). */
  readonly pageBounds?: boolean;
  /**
   * Draw every number on a grid of this step (`1/8` or coarser, so that Quest's bounds and
   * attention scores are exact in float32 whatever the order of their sums; a coarse grid ties
   * many page scores).
   */
  readonly grid?: number;
}

/**
 * Runs a case's calls on a `DeviceKVCache` and on a host `KVCache` side by side (appends in
 * chunks, a ragged eviction round, more appends, a truncation) and returns both with the request.
 */
export function buildCase(device: GPUDevice, c: Case) {
  const random = mulberry32(c.seed);
  const draw = (scale: number) => {
    const x = (random() * 2 - 1) * scale;
    return c.grid === undefined ? Math.fround(x) : Math.round(x / c.grid) * c.grid;
  };
  const options: KVCacheOptions = {
    geometry: { layers: 1, kvHeads: c.kvHeads, headDim: c.headDim, pageSize: c.pageSize },
    queryHeads: c.kvHeads * c.group,
    storeGates: c.gated,
    trace: false,
  };
  const cache = new DeviceKVCache({ ...options, pageBounds: c.pageBounds ?? false }, device);
  const host = new KVCache(options);
  let position = 0;
  const append = (tokens: number) => {
    const width = tokens * c.kvHeads * c.headDim;
    const keys = Float32Array.from({ length: width }, () => draw(c.spread));
    const values = Float32Array.from({ length: width }, () => draw(1));
    const positions = Int32Array.from({ length: tokens }, (_, i) => position + i);
    const gates = c.gated
      ? Float32Array.from({ length: tokens * c.kvHeads }, () => (random() < 0.1 ? 0 : random()))
      : undefined;
    position += tokens;
    cache.append(0, keys, values, positions, gates);
    host.append(0, keys, values, positions, gates);
  };
  for (let done = 0; done < c.before; done += c.chunk) append(Math.min(c.chunk, c.before - done));
  const live = host.liveCounts(0);
  const decision: KeepDecision = {
    granularity: 'head',
    keep: Array.from(live, (n) =>
      Int32Array.from({ length: n }, (_, i) => i).filter(() => random() < c.keep),
    ),
  };
  cache.keep(0, decision);
  host.keep(0, decision);
  append(c.after);
  const truncate = Math.min(c.truncate, c.after - 1);
  if (truncate > 0) {
    cache.truncate(position - truncate);
    host.truncate(position - truncate);
    position -= truncate;
  }
  const tokens = c.chunked ? c.queries : Math.min(c.queries, position);
  const queries = Float32Array.from({ length: tokens * c.kvHeads * c.group * c.headDim }, () =>
    draw(c.spread),
  );
  const first = c.chunked ? position : position - tokens;
  const queryPositions = Int32Array.from({ length: tokens }, (_, i) => first + i);
  const chunkFloats = tokens * c.kvHeads * c.headDim;
  const chunk = c.chunked
    ? {
        keys: Float32Array.from({ length: chunkFloats }, () => draw(c.spread)),
        values: Float32Array.from({ length: chunkFloats }, () => draw(1)),
        ...(c.biased
          ? { bias: Float32Array.from({ length: tokens * c.kvHeads }, () => draw(2)) }
          : {}),
      }
    : undefined;
  const counts = host.liveCounts(0);
  const maxLive = Math.max(...counts);
  const ranges = c.sparse
    ? Array.from(counts, (n) => {
        const cuts = Array.from({ length: 4 }, () => Math.floor(random() * (n + 1))).sort(
          (a, b) => a - b,
        );
        return Int32Array.of(cuts[0]!, cuts[1]!, cuts[2]!, cuts[3]!);
      })
    : undefined;
  const liveBias = c.biased
    ? Float32Array.from({ length: c.kvHeads * maxLive }, () => draw(3))
    : undefined;
  return { cache, host, request: { queries, queryPositions, ranges, liveBias, chunk } };
}

/**
 * Runs a case: the device cache's attention against float64 attention over the host cache.
 * Returns the largest `|error| / bound` over the outputs (≤ 1 passes) and the live counts of
 * both caches; the cache is disposed.
 */
export async function checkCase(device: GPUDevice, c: Case) {
  const { cache, host, request } = buildCase(device, c);
  try {
    const got = await cache.attendToHost(0, request);
    const expected = referenceAttention(host, 0, request);
    let worst = got.length === expected.out.length ? 0 : Number.POSITIVE_INFINITY;
    got.forEach((value, i) => {
      const error = Math.abs(value - expected.out[i]!);
      // a query that sees no entry gets zeros, exactly: error and bound are both 0 there
      worst = Math.max(worst, error === 0 ? 0 : error / expected.tolerance[i]!);
    });
    return {
      worst,
      live: Array.from(cache.stats().livePerHead),
      hostLive: Array.from(host.stats().livePerHead),
    };
  } finally {
    cache.dispose();
  }
}

/**
 * Runs cases of one shape as one batch (`DeviceKVCache.attendBatch`, their caches sharing a
 * pool): each sequence's rows against float64 attention over its host cache. Returns the largest
 * `|error| / bound` and the launch's dispatches; the caches are disposed.
 */
export async function checkBatch(device: GPUDevice, cases: readonly Case[]) {
  const built = cases.map((c) => buildCase(device, c));
  try {
    const before = deviceCounters().dispatches;
    const output = DeviceKVCache.attendBatch(
      0,
      built.map(({ cache, request }) => ({ cache, request })),
    );
    const dispatches = deviceCounters().dispatches - before;
    const width = cases[0]!.kvHeads * cases[0]!.group * cases[0]!.headDim;
    const total = built.reduce((sum, { request }) => sum + request.queryPositions.length, 0);
    const out = new Float32Array(await readBack(device, output, 4 * total * width));
    destroyGpuBuffer(output);
    let worst = 0;
    let row = 0;
    for (const { host, request } of built) {
      const expected = referenceAttention(host, 0, request);
      expected.out.forEach((value, j) => {
        const error = Math.abs(out[row * width + j]! - value);
        worst = Math.max(worst, error === 0 ? 0 : error / expected.tolerance[j]!);
      });
      row += request.queryPositions.length;
    }
    return { worst, dispatches };
  } finally {
    for (const { cache } of built) cache.dispose();
  }
}
