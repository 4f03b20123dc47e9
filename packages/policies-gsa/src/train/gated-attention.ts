import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';

/** Logit a key without teacher attention gets (exp of it is 0 in float32). */
const HIDDEN = -1e30;

/**
 * The gated attention of a layer from its teacher attention `A` `[B, Hq, T, T]` and the gate's
 * `log g` `[B, Hkv, T]`: `A ⊙ g / Σ_k A ⊙ g` per query row (each query head reads its group's KV
 * head), which is exactly `softmax(qkᵀ/√d + log g)` under the teacher's mask — the model's
 * gated attention without running the model again. Computed in log space (`log A + log g`, then
 * softmax), so rows stay normalised when every gate of a row is tiny.
 *
 * @throws LetheError `E_SHAPE` naming `logGates` when its batch, length or head count does not fit
 *   `attention` (query heads a multiple of KV heads).
 */
export function gatedAttention(attention: tf.Tensor4D, logGates: tf.Tensor3D): tf.Tensor4D {
  const [batch, queryHeads, length] = attention.shape;
  const [gateBatch, kvHeads, gateLength] = logGates.shape;
  if (gateBatch !== batch || gateLength !== length || queryHeads % kvHeads !== 0) {
    throw new LetheError(
      'E_SHAPE',
      `must be [${batch}, a divisor of ${queryHeads}, ${length}] for attention [${attention.shape.join(', ')}], got [${logGates.shape.join(', ')}]`,
      'logGates',
    );
  }
  return tf.tidy(() => {
    const group = queryHeads / kvHeads;
    // [B, Hkv, T] → [B, Hq, 1, T]: query head a reads KV head ⌊a / group⌋.
    const perQueryHead = tf.reshape(tf.tile(tf.expandDims(logGates, 2), [1, 1, group, 1]), [
      batch,
      queryHeads,
      1,
      length,
    ]);
    const logA = tf.where(tf.greater(attention, 0), tf.log(tf.maximum(attention, 1e-38)), HIDDEN);
    return tf.softmax(tf.add(logA, perQueryHead)) as tf.Tensor4D;
  });
}
