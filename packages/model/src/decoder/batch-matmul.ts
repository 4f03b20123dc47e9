import { tf } from '@lethe/tensor';

/** The `save` callback tfjs passes to a `customGrad` function. */
type SaveTensors = (tensors: tf.Tensor[]) => void;

/**
 * Multiply-adds per matrix product above which {@link batchMatMul} splits a batch into separate
 * 2-D products on wasm: each 2-D call costs ~0.7 ms of XNNPACK set-up here, the batched call
 * runs a generic loop 3–5× slower per multiply-add (measured on this project's dev machine).
 */
export const SPLIT_THRESHOLD = 1 << 20;

/**
 * `[M, K]·[K, N]` whose gradient also multiplies untransposed operands
 * (`da = dy·(bᵀ)`, `db = (aᵀ)·dy` with explicit transposes), keeping both passes on wasm's
 * XNNPACK path.
 */
const matMul2d = tf.customGrad((a, b, save) => {
  const left = a as tf.Tensor2D;
  const right = b as tf.Tensor2D;
  (save as SaveTensors)([left, right]);
  return {
    value: tf.matMul(left, right),
    gradFunc: (dy, saved) => {
      const [savedLeft, savedRight] = saved as [tf.Tensor2D, tf.Tensor2D];
      const grad = dy as tf.Tensor2D;
      return [tf.matMul(grad, tf.transpose(savedRight)), tf.matMul(tf.transpose(savedLeft), grad)];
    },
  };
});

/**
 * Batched matrix product `[..., M, K]·[..., K, N]` (or `·[..., N, K]ᵀ` with `transposeB`) over
 * identical batch dimensions. On the wasm backend, when each product has at least
 * {@link SPLIT_THRESHOLD} multiply-adds (e.g. attention over a long prompt), it runs one 2-D
 * XNNPACK product per batch entry instead of tfjs's generic batched loop; otherwise it is
 * `tf.matMul`. Differentiable either way.
 */
export function batchMatMul(a: tf.Tensor, b: tf.Tensor, transposeB = false): tf.Tensor {
  const batchShape = a.shape.slice(0, -2);
  const [rows, inner] = a.shape.slice(-2) as [number, number];
  const columns = b.shape[transposeB ? b.rank - 2 : b.rank - 1]!;
  if (tf.getBackend() !== 'wasm' || rows * inner * columns < SPLIT_THRESHOLD) {
    return tf.matMul(a, b, false, transposeB);
  }
  const count = batchShape.reduce((x, y) => x * y, 1);
  return tf.tidy(() => {
    const lefts = tf.unstack(tf.reshape(a, [count, rows, inner]));
    const rights = tf.unstack(
      tf.reshape(b, transposeB ? [count, columns, inner] : [count, inner, columns]),
    );
    const products = lefts.map((left, i) => {
      const right = transposeB ? tf.transpose(rights[i]!) : rights[i]!;
      return matMul2d(left, right) as tf.Tensor;
    });
    return tf.reshape(tf.stack(products), [...batchShape, rows, columns]);
  });
}
