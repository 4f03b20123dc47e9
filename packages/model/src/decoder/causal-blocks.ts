import { tf } from '@lethe/tensor';
import { causalLogitBias } from './masks';
import { attentionOutput } from './recomputed-attention';

/** Queries per block of {@link causalAttentionOutput}. */
export const CAUSAL_BLOCK = 256;

/** One block of queries of {@link causalAttentionOutput}: queries `start … start + rows − 1`. */
export interface CausalBlock {
  readonly start: number;
  readonly rows: number;
  /** Their causal logit bias over keys `0 … start + rows − 1`, `[1, 1, rows, start + rows]`. */
  readonly bias: tf.Tensor;
}

/**
 * The blocks of {@link CAUSAL_BLOCK} queries a sequence of `length` tokens splits into, each with
 * its causal bias made on the host as a constant (a slice of one shared bias would have the
 * gradient tape keep a copy of the whole bias per block). Made once per forward and shared by its
 * layers; the caller disposes the biases (or makes them inside its `tf.tidy`).
 */
export function causalBlocks(length: number): CausalBlock[] {
  const blocks: CausalBlock[] = [];
  for (let start = 0; start < length; start += CAUSAL_BLOCK) {
    const rows = Math.min(CAUSAL_BLOCK, length - start);
    const bias = tf.tensor4d(causalLogitBias(start, rows), [1, 1, rows, start + rows]);
    blocks.push({ start, rows, bias });
  }
  return blocks;
}

/**
 * {@link attentionOutput} under the causal mask alone (no other mask, no key bias), computed
 * block by block ({@link causalBlocks}), each block's queries over the keys up to its last query
 * only: the keys they cannot see contribute exact zeros to their softmax and products, so leaving
 * them out changes the work (and the rounding where a small block's products take another matmul
 * path, `batchMatMul`'s threshold) — about half of the score matrix at long sequences (5/8 of it at
 * 4 blocks, 9/16 at 8). Every query sees at least itself; under a mask that hides all of a
 * query's keys the whole matrix gives it a uniform row over every key, which blocks would not, so
 * masked attention stays whole. Differentiable with respect to q, k and v (the blocks' slices and
 * concatenation carry the gradients).
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, T, headDim]` (after RoPE), one per query position.
 * @param values `[B, Hkv, T, headDim]`.
 * @param blocks `causalBlocks(T)`.
 */
export function causalAttentionOutput(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  blocks: readonly CausalBlock[],
): tf.Tensor {
  if (blocks.length === 1) return attentionOutput(queries, keys, values, blocks[0]!.bias, false);
  return tf.tidy(() => {
    const outputs = blocks.map(({ start, rows, bias }) => {
      const q = tf.slice(queries, [0, 0, start, 0], [-1, -1, rows, -1]);
      const k = tf.slice(keys, [0, 0, 0, 0], [-1, -1, start + rows, -1]);
      const v = tf.slice(values, [0, 0, 0, 0], [-1, -1, start + rows, -1]);
      return attentionOutput(q, k, v, bias, false);
    });
    return tf.concat(outputs, 2);
  });
}
