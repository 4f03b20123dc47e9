import { tf } from '@lethe/tensor';
import type { SaveTensors } from './gradient-rules';

/**
 * Multiply-adds per matrix product from which {@link batchMatMul} splits a batch into separate
 * 2-D products on wasm. tfjs's batched product runs a generic loop there; each 2-D product runs
 * on XNNPACK after ~0.1 ms of set-up (the slices, the operator). Forward and backward on this
 * project's dev machine, the split was 1.3–2.5× as fast at 65,536 multiply-adds per product,
 * 1.6–3.6× at 262,144, even at ~37k and slower below (`bench/batch-matmul-split.ts`).
 */
export const SPLIT_THRESHOLD = 1 << 16;

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
 * {@link SPLIT_THRESHOLD} multiply-adds (attention over 32 tokens or more), it runs one 2-D
 * XNNPACK product per batch entry instead of tfjs's generic batched loop; otherwise it is
 * `tf.matMul`. Differentiable either way.
 */
export function batchMatMul(a: tf.Tensor, b: tf.Tensor, transposeB = false): tf.Tensor {
  const [rows, inner] = a.shape.slice(-2) as [number, number];
  const columns = b.shape[transposeB ? b.rank - 2 : b.rank - 1]!;
  if (tf.getBackend() !== 'wasm' || rows * inner * columns < SPLIT_THRESHOLD) {
    return tf.matMul(a, b, false, transposeB);
  }
  return splitBatchMatMul(a, b, transposeB);
}

/**
 * {@link batchMatMul}'s split path on any backend and at any size: one differentiable 2-D
 * product per batch entry, stacked back (for its benchmark and tests). A batch of one entry is
 * reshaped rather than unstacked: tfjs hands the gradient of a one-output unstack to its
 * gradient function as a tensor, not a list, and that function fails on it.
 */
export function splitBatchMatMul(a: tf.Tensor, b: tf.Tensor, transposeB: boolean): tf.Tensor {
  const batchShape = a.shape.slice(0, -2);
  const [rows, inner] = a.shape.slice(-2) as [number, number];
  const columns = b.shape[transposeB ? b.rank - 2 : b.rank - 1]!;
  const count = batchShape.reduce((x, y) => x * y, 1);
  const entries = (t: tf.Tensor, shape: [number, number]): tf.Tensor[] =>
    count === 1 ? [tf.reshape(t, shape)] : tf.unstack(tf.reshape(t, [count, ...shape]));
  return tf.tidy(() => {
    const lefts = entries(a, [rows, inner]);
    const rights = entries(b, transposeB ? [columns, inner] : [inner, columns]);
    const products = lefts.map((left, i) => {
      const right = transposeB ? tf.transpose(rights[i]!) : rights[i]!;
      return matMul2d(left, right) as tf.Tensor;
    });
    const stacked = count === 1 ? products[0]! : tf.stack(products);
    return tf.reshape(stacked, [...batchShape, rows, columns]);
  });
}
