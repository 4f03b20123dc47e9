import type { KVCacheStore, LayerView } from '@lethe/kv-cache';

/** float32's unit roundoff. */
const U = 2 ** -24;
const gamma = (n: number) => (n * U) / (1 - n * U);

/**
 * The observed attention of one query head over a cache's packed `view` (causal softmax of `q·k/√d` over the live entries of
 * its KV head, no bias: `KVCache`'s observation) in float64, brute force, with a bound on the float32 query-attention pass's error per probability:
 * `p·(2ε + γₙ + 5u) + 2⁻¹²⁶`, where `ε = 2δ + (3 + 2R)u + uR` bounds the relative error of one
 * weight `e^{s−max}` — `δ` a score's rounding (`γ_{d+2}·Σ|q·k|·scale + 2u|s|`, the dot product in
 * any order, then the scale), `R` the spread of the visible scores (the subtraction's rounding and
 * WGSL's `exp`, accurate to `3 + 2|x|` ulp) — `γₙ` the `n`-term sum's and `5u` WGSL's division
 * (2.5 ulp); `2⁻¹²⁶` covers a weight flushed to zero below float32's normal range.
 */
export function observedRow(
  cache: KVCacheStore,
  view: LayerView,
  query: Float32Array,
  queryHead: number,
  position: number,
) {
  const { kvHeads, headDim } = cache.geometry;
  const h = Math.floor(queryHead / (cache.queryHeads / kvHeads));
  const scale = 1 / Math.sqrt(headDim);
  const live = view.liveCounts[h]!;
  const scores: number[] = [];
  let delta = 0;
  for (let i = 0; i < live; i++) {
    const row = h * view.maxLive + i;
    if (view.positions[row]! > position) break;
    let dot = 0;
    let magnitude = 0;
    for (let d = 0; d < headDim; d++) {
      const product = query[d]! * view.keys[row * headDim + d]!;
      dot += product;
      magnitude += Math.abs(product);
    }
    const s = dot * scale;
    scores.push(s);
    delta = Math.max(delta, gamma(headDim + 2) * magnitude * scale + 2 * U * Math.abs(s));
  }
  const probabilities = new Float64Array(live);
  const tolerance = new Float64Array(live);
  if (scores.length === 0) return { probabilities, tolerance };
  const top = Math.max(...scores);
  const spread = top - Math.min(...scores);
  const weights = scores.map((s) => Math.exp(s - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  const epsilon = 2 * delta + (3 + 2 * spread) * U + U * spread;
  const relative = 2 * epsilon + gamma(scores.length) + 5 * U;
  weights.forEach((w, i) => {
    probabilities[i] = w / sum;
    tolerance[i] = probabilities[i]! * relative + 2 ** -126;
  });
  return { probabilities, tolerance };
}

/**
 * Bounds of the device's accumulated attention, kept beside a host cache fed the same calls:
 * per (KV head, position), the bound of every probability added to it (see {@link observedRow})
 * and the number of float32 additions (`γ_m` of the total covers their rounding).
 */
export class AccumulationBounds {
  /** Per KV head, per position: the summed bounds and the additions. */
  private readonly bound: number[][] = [];
  private readonly additions: number[][] = [];

  /** Records `queries` (`[T, queryHeads, headDim]`) at `positions` over `cache`'s current entries. */
  record(cache: KVCacheStore, layer: number, queries: Float32Array, positions: Int32Array): void {
    const { kvHeads, headDim } = cache.geometry;
    const group = cache.queryHeads / kvHeads;
    const view = cache.view(layer);
    for (let t = 0; t < positions.length; t++) {
      for (let q = 0; q < cache.queryHeads; q++) {
        const offset = (t * cache.queryHeads + q) * headDim;
        const row = observedRow(
          cache,
          view,
          queries.subarray(offset, offset + headDim),
          q,
          positions[t]!,
        );
        const h = Math.floor(q / group);
        this.bound[h] ??= [];
        this.additions[h] ??= [];
        row.tolerance.forEach((tolerance, i) => {
          const at = view.positions[h * view.maxLive + i]!;
          this.bound[h]![at] = (this.bound[h]![at] ?? 0) + tolerance;
          this.additions[h]![at] = (this.additions[h]![at] ?? 0) + 1;
        });
      }
    }
  }

  /** The bound of the accumulated attention `value` of the entry of head `h` at `position`. */
  tolerance(h: number, position: number, value: number): number {
    const bound = this.bound[h]?.[position] ?? 0;
    return bound + gamma(2 * (this.additions[h]?.[position] ?? 0)) * value;
  }
}
