import type { KVCacheStore } from '@lethe/kv-cache';

/** float32's unit roundoff. */
const U = 2 ** -24;
const gamma = (n: number) => (n * U) / (1 - n * U);

/** What an attention test reads, as the device cache's `attend` takes it. */
export interface ReferenceRequest {
  readonly queries: Float32Array;
  readonly queryPositions: Int32Array;
  readonly ranges?: readonly (Int32Array | undefined)[];
  readonly liveBias?: Float32Array;
  readonly chunk?: { keys: Float32Array; values: Float32Array; bias?: Float32Array };
}

/**
 * The attention of a request in float64 from a cache's packed view (brute force, an independent
 * read of the host mirror), with a tolerance per output for the float32 kernel:
 * `maxV·(2δs + 2γₙ₊₁ + 2εw + 2εm + 4u)`, where `δs` bounds a score's rounding (`γ_{d+2}·Σ|q·k|·scale`
 * plus the roundings of the scale, bias and WGSL's `log` of a gate, 3 ulp or 2⁻²¹ absolute),
 * `γₙ₊₁` an `n`-term sum's (the softmax's denominator and numerators), `εw = Σ e^{xⱼ}(3 + 2|xⱼ|)u /
 * Σ e^{xⱼ}` WGSL's `exp` error (3 + 2|x| ulp) over the weights (`xⱼ = sⱼ − max s`), and
 * `εm = (3 + 2R)u` the error of one merge factor `e^{mₛ − M}` (`R`: the spread of the visible
 * scores). A softmax output moves by at most `2·maxV·ε` when its weights move by a relative `ε`.
 */
export function referenceAttention(cache: KVCacheStore, layer: number, request: ReferenceRequest) {
  const view = cache.view(layer);
  const { kvHeads, headDim } = cache.geometry;
  const group = cache.queryHeads / kvHeads;
  const scale = Math.fround(1 / Math.sqrt(headDim));
  const tokens = request.queryPositions.length;
  const out = new Float64Array(tokens * cache.queryHeads * headDim);
  const tolerance = new Float64Array(out.length);
  for (let t = 0; t < tokens; t++) {
    for (let qh = 0; qh < cache.queryHeads; qh++) {
      const h = Math.floor(qh / group);
      const live = view.liveCounts[h]!;
      const ranges = request.ranges?.[h] ?? Int32Array.of(0, live);
      const q = request.queries.subarray(
        (t * cache.queryHeads + qh) * headDim,
        (t * cache.queryHeads + qh + 1) * headDim,
      );
      // an entry's key and value: a row of the view's arrays, or of the chunk's
      const seen: { score: number; error: number; key: Float32Array; value: Float32Array }[] = [];
      const score = (key: Float32Array, bias: number, biasError: number) => {
        let dot = 0;
        let magnitude = 0;
        for (let d = 0; d < headDim; d++) {
          dot += q[d]! * key[d]!;
          magnitude += Math.abs(q[d]! * key[d]!);
        }
        const s = dot * scale + bias;
        return {
          score: s,
          error: gamma(headDim + 2) * magnitude * scale + 2 * U * Math.abs(s) + biasError,
        };
      };
      for (let r = 0; r < ranges.length; r += 2) {
        for (let i = ranges[r]!; i < ranges[r + 1]!; i++) {
          const row = h * view.maxLive + i;
          if (view.positions[row]! > request.queryPositions[t]!) continue;
          let bias = request.liveBias?.[h * view.maxLive + i] ?? 0;
          let biasError = 4 * U * Math.abs(bias);
          if (view.gates !== undefined) {
            const gate = view.gates[row]!;
            if (gate <= 0) continue;
            const logGate = Math.log(gate);
            bias += logGate;
            biasError += Math.max(2 ** -21, 3 * U * Math.abs(logGate)) + 2 * U * Math.abs(bias);
          }
          seen.push({
            ...score(view.keys.subarray(row * headDim, (row + 1) * headDim), bias, biasError),
            key: view.keys.subarray(row * headDim, (row + 1) * headDim),
            value: view.values!.subarray(row * headDim, (row + 1) * headDim),
          });
        }
      }
      const chunk = request.chunk;
      for (let u = 0; chunk !== undefined && u <= t; u++) {
        const at = (u * kvHeads + h) * headDim;
        const key = chunk.keys.subarray(at, at + headDim);
        const bias = chunk.bias?.[u * kvHeads + h] ?? 0;
        seen.push({
          ...score(key, bias, 4 * U * Math.abs(bias)),
          key,
          value: chunk.values.subarray(at, at + headDim),
        });
      }
      const at = (t * cache.queryHeads + qh) * headDim;
      if (seen.length === 0) continue; // zeros, exactly
      const max = Math.max(...seen.map((s) => s.score));
      const min = Math.min(...seen.map((s) => s.score));
      const weights = seen.map((s) => Math.exp(s.score - max));
      const sum = weights.reduce((a, b) => a + b, 0);
      const expError =
        seen.reduce((acc, s, j) => acc + weights[j]! * (3 + 2 * (max - s.score)) * U, 0) / sum;
      const scoreError = Math.max(...seen.map((s) => s.error));
      let maxV = 0;
      for (const s of seen) for (const v of s.value) maxV = Math.max(maxV, Math.abs(v));
      const bound =
        maxV *
          (2 * scoreError +
            2 * gamma(seen.length + 1) +
            2 * expError +
            2 * (3 + 2 * (max - min)) * U +
            4 * U) +
        1e-30;
      for (let d = 0; d < headDim; d++) {
        let acc = 0;
        seen.forEach((s, j) => {
          acc += weights[j]! * s.value[d]!;
        });
        out[at + d] = acc / sum;
        tolerance[at + d] = bound;
      }
    }
  }
  return { out, tolerance };
}
