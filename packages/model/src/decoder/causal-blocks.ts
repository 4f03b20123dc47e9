import { tf } from '@lethe/tensor';
import { attentionOutput } from './recomputed-attention';

/** Queries per block of {@link causalAttentionOutput}. */
export const CAUSAL_BLOCK = 256;

/**
 * {@link attentionOutput} under the causal mask alone (`causalVisibility`'s bias: no other mask,
 * no gradient wanted for it), computed in blocks of {@link CAUSAL_BLOCK} queries, each over the
 * keys up to its last query only: the keys a block's queries cannot see contribute exact zeros to
 * their softmax and products, so leaving them out changes the work (and the rounding where a
 * small block's products take another matmul path, `batchMatMul`'s threshold) — about half of
 * the score matrix at long sequences (5/8 of it at 4 blocks, 9/16 at 8). Every query sees at least
 * itself; under a mask that hides all of a query's keys the whole matrix gives it a uniform row
 * over every key, which blocks would not, so masked attention stays whole. Differentiable with
 * respect to q, k and v (the blocks' slices and concatenation carry the gradients).
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, T, headDim]` (after RoPE), one per query position.
 * @param values `[B, Hkv, T, headDim]`.
 * @param causalBias the causal mask's logit bias, `[1, 1, T, T]`.
 */
export function causalAttentionOutput(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  causalBias: tf.Tensor,
): tf.Tensor {
  const length = queries.shape[2]!;
  if (length <= CAUSAL_BLOCK) {
    return attentionOutput(queries, keys, values, causalBias, false);
  }
  return tf.tidy(() => {
    const blocks: tf.Tensor[] = [];
    for (let start = 0; start < length; start += CAUSAL_BLOCK) {
      const rows = Math.min(CAUSAL_BLOCK, length - start);
      const seen = start + rows;
      const q = tf.slice(queries, [0, 0, start, 0], [-1, -1, rows, -1]);
      const k = tf.slice(keys, [0, 0, 0, 0], [-1, -1, seen, -1]);
      const v = tf.slice(values, [0, 0, 0, 0], [-1, -1, seen, -1]);
      const bias = tf.slice(causalBias, [0, 0, start, 0], [-1, -1, rows, seen]);
      blocks.push(attentionOutput(q, k, v, bias, false));
    }
    return tf.concat(blocks, 2);
  });
}
