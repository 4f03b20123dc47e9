import { tf } from '@lethe/tensor';

/**
 * Logit given to a key a query may not see. Finite (not −∞) so that a row whose keys are all
 * hidden, such as a padding query, yields a finite uniform distribution instead of NaN; after the
 * softmax's max subtraction `exp(−1e9)` is exactly 0 in float32.
 */
export const HIDDEN_LOGIT = -1e9;

/**
 * Causal visibility `[T, T]` as 0/1 floats: query `i` sees key `j` iff `j ≤ i`. Built on the host
 * as a constant (no `bandPart`, whose gradient throws in tfjs).
 */
export function causalVisibility(length: number): Float32Array {
  const out = new Float32Array(length * length);
  for (let i = 0; i < length; i++) out.fill(1, i * length, i * length + i + 1);
  return out;
}

/**
 * Causal visibility of right-padded chunks, `[B, T, T]` 0/1 floats: in row `b`, query `i` sees
 * key `j` iff `j ≤ i` and `j < lengths[b]` (padding keys are hidden from every query).
 *
 * @param lengths real length of each chunk, each in `[1, width]`.
 * @param width padded length `T`.
 */
export function paddedCausalVisibility(lengths: Int32Array, width: number): Float32Array {
  const out = new Float32Array(lengths.length * width * width);
  for (let b = 0; b < lengths.length; b++) {
    const length = lengths[b]!;
    for (let i = 0; i < width; i++) {
      const row = (b * width + i) * width;
      out.fill(1, row, row + Math.min(i + 1, length));
    }
  }
  return out;
}

/**
 * Turns a 0/1 visibility tensor (any numeric or bool dtype; nonzero = visible) into an additive
 * logit bias: 0 where visible, {@link HIDDEN_LOGIT} where hidden.
 */
export function visibilityToLogitBias(visible: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const mask = tf.cast(tf.notEqual(visible, 0), 'float32');
    return tf.mul(tf.sub(1, mask), HIDDEN_LOGIT);
  });
}
