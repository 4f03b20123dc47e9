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
 * The causal logit bias of queries `first … first + rows − 1` over keys `0 … first + rows − 1`,
 * `[rows, first + rows]` on the host: 0 where the key is at or before the query,
 * {@link HIDDEN_LOGIT} after it (rows `first …` of `visibilityToLogitBias(causalVisibility(·))`).
 */
export function causalLogitBias(first: number, rows: number): Float32Array {
  const keys = first + rows;
  const out = new Float32Array(rows * keys).fill(HIDDEN_LOGIT);
  for (let r = 0; r < rows; r++) out.fill(0, r * keys, r * keys + first + r + 1);
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
