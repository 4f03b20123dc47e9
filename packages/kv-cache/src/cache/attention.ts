import type { AttentionKernel, KernelOperands } from '../attend/attention-kernel';
import { attentionWeights } from '../attend/attention-lanes';
import type { HeadStore } from './head-store';

/**
 * Causal softmax attention of one query over the live entries of one KV head, with scale
 * `1 / sqrt(headDim)`. The query sees the entries whose position is ≤ `queryPosition` (a
 * prefix of the live set, since entries are ordered by position); their probabilities are
 * written to `out[0 .. seen)` and `seen` is returned. Logits and the softmax run in float64.
 */
export function attentionRow(
  store: HeadStore,
  query: Float32Array,
  queryOffset: number,
  queryPosition: number,
  headDim: number,
  pageSize: number,
  out: Float64Array,
): number {
  const seen = store.visibleTo(queryPosition);
  if (seen === 0) return 0;
  const scale = 1 / Math.sqrt(headDim);
  let max = Number.NEGATIVE_INFINITY;
  for (let p = 0; p * pageSize < seen; p++) {
    const keys = store.page(p).keys;
    const n = Math.min(pageSize, seen - p * pageSize);
    for (let s = 0; s < n; s++) {
      let dot = 0;
      const k = s * headDim;
      for (let c = 0; c < headDim; c++) dot += query[queryOffset + c] * keys[k + c];
      const logit = dot * scale;
      out[p * pageSize + s] = logit;
      if (logit > max) max = logit;
    }
  }
  let sum = 0;
  for (let i = 0; i < seen; i++) {
    const e = Math.exp(out[i] - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < seen; i++) out[i] /= sum;
  return seen;
}

/** Shape facts the attention helpers need. */
export interface AttentionShape {
  readonly kvHeads: number;
  readonly queryHeads: number;
  readonly headDim: number;
  readonly pageSize: number;
}

/**
 * Adds the attention of every query in `queries` (`[T, queryHeads, headDim]`, positions
 * `positions`) to the entries it sees: per entry, the sum over the query heads of its group,
 * and one more count per query token.
 */
export function accumulateAttention(
  heads: readonly HeadStore[],
  queries: Float32Array,
  positions: Int32Array,
  shape: AttentionShape,
): void {
  const { kvHeads, queryHeads, headDim, pageSize } = shape;
  const group = queryHeads / kvHeads;
  let maxLive = 0;
  for (const store of heads) maxLive = Math.max(maxLive, store.live);
  const row = new Float64Array(maxLive);
  const sum = new Float64Array(maxLive);
  for (let t = 0; t < positions.length; t++) {
    for (let g = 0; g < kvHeads; g++) {
      const store = heads[g];
      let seen = 0;
      sum.fill(0);
      for (let q = g * group; q < (g + 1) * group; q++) {
        const offset = (t * queryHeads + q) * headDim;
        seen = attentionRow(store, queries, offset, positions[t], headDim, pageSize, row);
        for (let i = 0; i < seen; i++) sum[i] += row[i];
      }
      store.accumulateAttention(sum, seen);
    }
  }
}

/**
 * Attention of `n` queries (`[n, queryHeads, headDim]`) over the current live entries of their
 * KV heads (query head `q` reads KV head `floor(q / (queryHeads / kvHeads))`), as
 * `[n, queryHeads, maxLive]`: causal, padding and unseen entries 0. Each KV head's live keys are
 * copied out of its pages once for the window; the weights are the cache attention's own
 * (`attention-lanes.ts`: float32, its `exp32`), computed by the WebAssembly SIMD kernel when
 * `kernel` is given and the head dimension is a multiple of 4, else by its portable twin (the
 * same bits), and divided by their sum in float32.
 */
export function windowAttention(
  heads: readonly HeadStore[],
  queries: Float32Array,
  positions: Int32Array,
  maxLive: number,
  shape: AttentionShape,
  kernel: AttentionKernel | undefined,
): Float32Array {
  const { kvHeads, queryHeads, headDim } = shape;
  const group = queryHeads / kvHeads;
  const tokens = positions.length;
  const out = new Float32Array(tokens * queryHeads * maxLive);
  const scale = Math.fround(1 / Math.sqrt(headDim));
  const simd = kernel !== undefined && headDim % 4 === 0;
  const groupFloats = group * headDim;
  for (let h = 0; h < kvHeads; h++) {
    const store = heads[h];
    const live = store.live;
    if (live === 0) continue;
    const operands = simd
      ? kernel.operands(live, headDim, group, tokens)
      : {
          keys: new Float32Array(live * headDim),
          queries: new Float32Array(tokens * groupFloats),
        };
    store.gather(
      Int32Array.of(0, live),
      { keys: operands.keys, values: undefined, gates: undefined },
      0,
    );
    for (let t = 0; t < tokens; t++) {
      const from = (t * queryHeads + h * group) * headDim;
      operands.queries.set(queries.subarray(from, from + groupFloats), t * groupFloats);
    }
    for (let t = 0; t < tokens; t++) {
      const seen = store.visibleTo(positions[t]);
      if (seen === 0) continue;
      const rowOf = (g: number) => (t * queryHeads + h * group + g) * maxLive;
      if (simd) {
        kernel.runWeights(scale, t, seen);
        const { scores } = operands as KernelOperands;
        const stride = 4 * Math.ceil(seen / 4);
        for (let g = 0; g < group; g++) {
          divideInto(out, rowOf(g), scores, g * stride, seen, scores[group * stride + g]);
        }
      } else {
        for (let g = 0; g < group; g++) {
          const query = operands.queries.subarray(
            (t * group + g) * headDim,
            (t * group + g + 1) * headDim,
          );
          attentionWeights(
            query,
            operands.keys,
            seen,
            headDim,
            out.subarray(rowOf(g), rowOf(g) + seen),
          );
        }
      }
    }
  }
  return out;
}

/** `out[at + j] = weights[from + j] / sum` for `j < n`, each quotient a float32. */
function divideInto(
  out: Float32Array,
  at: number,
  weights: Float32Array,
  from: number,
  n: number,
  sum: number,
): void {
  for (let j = 0; j < n; j++) out[at + j] = weights[from + j] / sum;
}
