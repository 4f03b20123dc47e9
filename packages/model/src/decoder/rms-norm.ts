import { tf } from '@lethe/tensor';

/**
 * Root-mean-square layer norm over the last axis (Llama / Qwen2):
 * `y = x / sqrt(mean(x², -1) + eps) · weight`.
 *
 * @param x activations `[..., D]`.
 * @param weight per-channel gain `[D]`.
 * @param eps added to the mean square before the square root (`rms_norm_eps`).
 */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  return tf.tidy(() => {
    const meanSquare = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight);
  });
}
