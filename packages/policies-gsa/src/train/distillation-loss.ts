import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { gatedAttention } from './gated-attention';

/**
 * Stage 1's `L_attn` (attention distillation): per layer the mean squared difference between the
 * gated attention ({@link gatedAttention}) and the teacher's, over every query head, key and
 * (real) query row, averaged over layers. `mask` `[B, T]` (1 = a real token) leaves padded query
 * rows out; padded keys never matter, since a real query never sees one.
 *
 * @param teacher per layer `[B, Hq, T, T]`, the frozen model's attention (a constant).
 * @param logGates per layer `[B, Hkv, T]`, the gate's `log g` (what gets the gradient).
 * @throws LetheError `E_ARG` naming `logGates` when it has another number of layers (or none).
 */
export function distillationLoss(
  teacher: readonly tf.Tensor4D[],
  logGates: readonly tf.Tensor3D[],
  mask?: tf.Tensor2D,
): tf.Scalar {
  if (logGates.length === 0 || logGates.length !== teacher.length) {
    throw new LetheError(
      'E_ARG',
      `needs one entry per teacher layer (${teacher.length}), got ${logGates.length}`,
      'logGates',
    );
  }
  return tf.tidy(() => {
    const perLayer = teacher.map((attention, l) => {
      const squared = tf.square(tf.sub(gatedAttention(attention, logGates[l]!), attention));
      const [, queryHeads, length] = attention.shape;
      if (mask === undefined) return tf.mean(squared);
      // [B, T] → [B, 1, T, 1]: a padded query's whole row is left out.
      const rows = tf.reshape(mask, [mask.shape[0], 1, length, 1]);
      const count = tf.mul(tf.sum(mask), queryHeads * length);
      return tf.div(tf.sum(tf.mul(squared, rows)), tf.maximum(count, 1));
    });
    return tf.div(tf.addN(perLayer), perLayer.length) as tf.Scalar;
  });
}
