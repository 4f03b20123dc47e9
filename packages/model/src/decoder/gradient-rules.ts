import { tf } from '@lethe/tensor';

/** The `save` callback tfjs passes to a `customGrad` function. */
export type SaveTensors = (tensors: tf.Tensor[]) => void;

/**
 * `compute(x)` treated as a constant: its gradient with respect to `x` is zero, and the ops
 * inside are not recorded on the gradient tape (tfjs has no `stop_gradient`; ops run inside a
 * `customGrad` forward are not taped, so ops without gradients such as `topk` may be used).
 */
export function withoutGradient(x: tf.Tensor, compute: (x: tf.Tensor) => tf.Tensor): tf.Tensor {
  const op = tf.customGrad((input) => ({
    value: compute(input as tf.Tensor),
    gradFunc: (dy) => tf.zerosLike(dy as tf.Tensor),
  }));
  return op(x) as tf.Tensor;
}

/**
 * `compute(x)` with the straight-through gradient: the backward pass treats it as the identity
 * (`dx = dy`), the usual rule for rounding in fake quantisation. `compute` must keep the shape.
 */
export function straightThrough(x: tf.Tensor, compute: (x: tf.Tensor) => tf.Tensor): tf.Tensor {
  const op = tf.customGrad((input) => ({
    value: compute(input as tf.Tensor),
    gradFunc: (dy) => tf.clone(dy as tf.Tensor),
  }));
  return op(x) as tf.Tensor;
}
