import { tf } from '@lethe/tensor';
import { HIDDEN_LOGIT } from './masks';
import { attentionOutput } from './recomputed-attention';

/** Queries per block of {@link causalAttentionOutput}. */
export const CAUSAL_BLOCK = 256;

/**
 * {@link attentionOutput} under the causal mask alone (no other mask, no key bias), computed in
 * blocks of {@link CAUSAL_BLOCK} queries, each over the keys up to its last query only: the keys a
 * block's queries cannot see contribute exact zeros to their softmax and products, so leaving them
 * out changes the work (and the rounding where a small block's products take another matmul path,
 * `batchMatMul`'s threshold) — about half of the score matrix at long sequences (5/8 of it at 4
 * blocks, 9/16 at 8). Every query sees at least itself; under a mask that hides all of a query's
 * keys the whole matrix gives it a uniform row over every key, which blocks would not, so masked
 * attention stays whole. Each block's causal bias is made on the host as a constant (a slice of
 * one shared bias would have the gradient tape keep a copy of the whole bias per block).
 * Differentiable with respect to q, k and v (the blocks' slices and concatenation carry the
 * gradients).
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, T, headDim]` (after RoPE), one per query position.
 * @param values `[B, Hkv, T, headDim]`.
 */
export function causalAttentionOutput(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
): tf.Tensor {
  const length = queries.shape[2]!;
  return tf.tidy(() => {
    if (length <= CAUSAL_BLOCK) {
      return attentionOutput(queries, keys, values, blockBias(0, length, length), false);
    }
    const blocks: tf.Tensor[] = [];
    for (let start = 0; start < length; start += CAUSAL_BLOCK) {
      const rows = Math.min(CAUSAL_BLOCK, length - start);
      const seen = start + rows;
      const q = tf.slice(queries, [0, 0, start, 0], [-1, -1, rows, -1]);
      const k = tf.slice(keys, [0, 0, 0, 0], [-1, -1, seen, -1]);
      const v = tf.slice(values, [0, 0, 0, 0], [-1, -1, seen, -1]);
      blocks.push(attentionOutput(q, k, v, blockBias(start, rows, seen), false));
    }
    return tf.concat(blocks, 2);
  });
}

/**
 * The causal logit bias `[1, 1, rows, seen]` of queries `start … start + rows − 1` over keys
 * `0 … seen − 1`: 0 where the key is at or before the query, {@link HIDDEN_LOGIT} after it.
 */
function blockBias(start: number, rows: number, seen: number): tf.Tensor {
  const bias = new Float32Array(rows * seen).fill(HIDDEN_LOGIT);
  for (let r = 0; r < rows; r++) bias.fill(0, r * seen, r * seen + start + r + 1);
  return tf.tensor4d(bias, [1, 1, rows, seen]);
}
