import { tf } from '@lethe/tensor';

/** Gate value below which a token counts as dropped in {@link GateStatistics}. */
export const LOW_GATE = 0.1;
/** Gate value above which a token counts as kept in {@link GateStatistics}. */
export const HIGH_GATE = 0.9;

/** How a trained gate spreads its values, over every real token, output and layer. */
export interface GateStatistics {
  /** Mean gate `g`. */
  readonly meanGate: number;
  /** Fraction of gates below {@link LOW_GATE}. */
  readonly lowFraction: number;
  /** Fraction of gates above {@link HIGH_GATE}. */
  readonly highFraction: number;
}

/**
 * `[mean g, fraction < 0.1, fraction > 0.9]` of the gates `σ(s)` of every layer's logits
 * (`[B, T, outputs]` each), over the tokens `mask` `[B, T]` marks real (all without one), as a
 * `[3]` tensor the caller owns.
 */
export function gateStatisticsTensor(
  logits: readonly tf.Tensor3D[],
  mask?: tf.Tensor2D,
): tf.Tensor1D {
  return tf.tidy(() => {
    const g = tf.concat(
      logits.map((s) => tf.sigmoid(s)),
      2,
    );
    const weights =
      mask === undefined ? tf.onesLike(g) : tf.mul(tf.onesLike(g), tf.expandDims(mask, 2));
    const count = tf.maximum(tf.sum(weights), 1);
    const share = (values: tf.Tensor) => tf.div(tf.sum(tf.mul(values, weights)), count);
    return tf.stack([
      share(g),
      share(tf.cast(tf.less(g, LOW_GATE), 'float32')),
      share(tf.cast(tf.greater(g, HIGH_GATE), 'float32')),
    ]) as tf.Tensor1D;
  });
}
