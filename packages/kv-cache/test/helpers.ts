import { cacheGeometry, KVCache, type KVCacheOptions } from '../src/index';

export { mulberry32 } from '@lethe/test-utils/random';

/** `count` distinct indices from `[0, n)` in random order. */
export function randomSubset(random: () => number, n: number, count: number): Int32Array {
  const all = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return Int32Array.from(all.slice(0, Math.min(count, n)));
}

/** Deterministic key component of (layer, token, head, channel): what the tests append and expect back. */
export function keyAt(layer: number, token: number, head: number, channel: number): number {
  return Math.fround(Math.sin(layer * 7.1 + token * 1.37 + head * 0.61 + channel * 0.23) * 2);
}

/** Deterministic value component. */
export function valueAt(layer: number, token: number, head: number, channel: number): number {
  return Math.fround(Math.cos(layer * 3.3 + token * 0.71 + head * 1.9 + channel * 0.47));
}

/** Deterministic gate. */
export function gateAt(layer: number, token: number, head: number): number {
  return Math.fround(0.5 + 0.5 * Math.sin(layer + token * 0.3 + head * 2.2));
}

/** Deterministic query component of (layer, token, query head, channel). */
export function queryAt(layer: number, token: number, head: number, channel: number): number {
  return Math.fround(Math.cos(layer * 1.7 + token * 0.93 + head * 2.7 + channel * 0.31) * 1.5);
}

/** Position of the token with append index `token` (gaps on purpose: positions ≠ indices). */
export function positionOf(token: number): number {
  return 3 + 2 * token;
}

/** Builds the append arguments for tokens `[from, from + count)` of `layer`. */
export function tokenBatch(
  cache: KVCache,
  layer: number,
  from: number,
  count: number,
): {
  keys: Float32Array;
  values: Float32Array;
  positions: Int32Array;
  gates?: Float32Array;
  queries: Float32Array;
} {
  const { kvHeads, headDim } = cache.geometry;
  const keys = new Float32Array(count * kvHeads * headDim);
  const values = new Float32Array(count * kvHeads * headDim);
  const gates = new Float32Array(count * kvHeads);
  const queries = new Float32Array(count * cache.queryHeads * headDim);
  const positions = new Int32Array(count);
  for (let t = 0; t < count; t++) {
    positions[t] = positionOf(from + t);
    for (let h = 0; h < kvHeads; h++) {
      gates[t * kvHeads + h] = gateAt(layer, from + t, h);
      for (let c = 0; c < headDim; c++) {
        keys[(t * kvHeads + h) * headDim + c] = keyAt(layer, from + t, h, c);
        values[(t * kvHeads + h) * headDim + c] = valueAt(layer, from + t, h, c);
      }
    }
    for (let q = 0; q < cache.queryHeads; q++) {
      for (let c = 0; c < headDim; c++)
        queries[(t * cache.queryHeads + q) * headDim + c] = queryAt(layer, from + t, q, c);
    }
  }
  return { keys, values, positions, ...(cache.storeGates ? { gates } : {}), queries };
}

/** Appends tokens `[from, from + count)` to `layer` (and records their queries when asked). */
export function appendTokens(
  cache: KVCache,
  layer: number,
  from: number,
  count: number,
  record = false,
): void {
  const batch = tokenBatch(cache, layer, from, count);
  cache.append(layer, batch.keys, batch.values, batch.positions, batch.gates);
  if (record) cache.recordQueries(layer, batch.queries, batch.positions);
}

/** A cache with small defaults for tests. */
export function smallCache(
  overrides: Partial<KVCacheOptions> & {
    kvHeads?: number;
    headDim?: number;
    layers?: number;
    pageSize?: number;
  } = {},
): KVCache {
  const { kvHeads = 2, headDim = 3, layers = 2, pageSize = 4, ...rest } = overrides;
  return new KVCache({
    geometry: cacheGeometry({ layers, kvHeads, headDim, pageSize }),
    queryHeads: kvHeads,
    ...rest,
  });
}
