import { tf } from '@lethe/tensor';
import type { SaveTensors } from './gradient-rules';

/**
 * `x·Wᵀ` for 2-D `x` `[M, in]` and `W` `[out, in]` with a custom gradient (`dx = dy·W`,
 * `dW = dyᵀ·x`) so that no pass multiplies with a transposed operand: tfjs's wasm backend runs
 * transposed or batched matmuls on a slow generic path (~10–50× slower here) and only
 * `[M, K]·[K, N]` products on XNNPACK. The forward transposes whichever costs less to move:
 * `W` (`x·(Wᵀ)`, for the many rows of a training batch) or `x` and the product
 * (`(W·xᵀ)ᵀ`, for a few rows). Both give the same float32 values.
 */
const matMulTransposedWeight = tf.customGrad((x, weight, save) => {
  const input = x as tf.Tensor2D;
  const w = weight as tf.Tensor2D;
  (save as SaveTensors)([input, w]);
  const [rows, inFeatures] = input.shape;
  const outFeatures = w.shape[0];
  const moveWeight = outFeatures * inFeatures < rows * (inFeatures + outFeatures);
  return {
    value: moveWeight
      ? tf.matMul(input, tf.transpose(w))
      : tf.transpose(tf.matMul(w, tf.transpose(input))),
    gradFunc: (dy, saved) => {
      const [savedInput, savedWeight] = saved as [tf.Tensor2D, tf.Tensor2D];
      const grad = dy as tf.Tensor2D;
      return [tf.matMul(grad, savedWeight), tf.matMul(tf.transpose(grad), savedInput)];
    },
  };
});

/**
 * A PyTorch-convention linear layer: `y = x · Wᵀ + b` with `W` stored `[out, in]` as in HF
 * checkpoints.
 *
 * @param x input `[..., in]`.
 * @param weight `[out, in]`.
 * @param bias optional `[out]`.
 * @returns `[..., out]`.
 */
export function linear(x: tf.Tensor, weight: tf.Tensor, bias?: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const inFeatures = x.shape[x.shape.length - 1]!;
    const outFeatures = weight.shape[0]!;
    const flat = tf.reshape(x, [-1, inFeatures]);
    let y = matMulTransposedWeight(flat, weight) as tf.Tensor;
    if (bias !== undefined) y = tf.add(y, bias);
    return tf.reshape(y, [...x.shape.slice(0, -1), outFeatures]);
  });
}
