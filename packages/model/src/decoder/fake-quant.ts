import { assertInteger, LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { straightThrough } from './gradient-rules';

/** Smallest and largest activation bit widths accepted by {@link fakeQuantizeRows}. */
export const ACTIVATION_BITS_RANGE = Object.freeze({ min: 2, max: 16 });

/**
 * Largest quantisation level of a signed symmetric `bits`-bit grid, `2^(bits−1) − 1`.
 * Throws `E_ARG` (naming `argument`) unless `bits` is an integer in [2, 16].
 */
export function quantizationLevels(bits: number, argument = 'activationBits'): number {
  assertInteger(bits, argument);
  if (bits < ACTIVATION_BITS_RANGE.min || bits > ACTIVATION_BITS_RANGE.max) {
    throw new LetheError('E_ARG', `must be in [2, 16], got ${bits}`, argument);
  }
  return 2 ** (bits - 1) - 1;
}

/**
 * Per-row symmetric fake quantisation (SOL): for each row `x` of the last axis,
 * `scale = max|x| / L`, `y = clamp(round(x / scale), −L, L) · scale`, with `L` the number of
 * levels from {@link quantizationLevels}. Rounding is tfjs's (half to even, like `torch.round`).
 * An all-zero row stays zero. Gradient: straight-through (`dx = dy`), as in quantisation-aware
 * training.
 *
 * @param x activations `[..., D]`.
 * @param levels `L`: a number, or a tensor broadcastable to `[..., 1]` (one level count per row).
 */
export function fakeQuantizeRows(x: tf.Tensor, levels: number | tf.Tensor): tf.Tensor {
  return straightThrough(x, (input) =>
    tf.tidy(() => {
      const maxAbs = tf.max(tf.abs(input), -1, true);
      const scale = tf.div(maxAbs, levels);
      const safeScale = tf.add(scale, tf.cast(tf.equal(scale, 0), 'float32'));
      const rounded = tf.round(tf.div(input, safeScale));
      const clamped = tf.minimum(tf.maximum(rounded, tf.neg(levels)), levels);
      return tf.mul(clamped, safeScale);
    }),
  );
}
