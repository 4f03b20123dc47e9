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
 * How {@link batchMatMul} multiplies on wasm: `split`, one 2-D XNNPACK product per batch entry;
 * `batched`, tfjs's generic batched loop. The two round differently (XNNPACK accumulates the inner
 * dimension in one pass, the generic loop in blocks), so a caller whose result must not depend on
 * how many products share the call picks the path itself (see {@link productSplits}).
 */
export type MatMulPath = 'split' | 'batched';

/**
 * Whether a product of `[rows, inner]·[inner, columns]` is large enough for {@link batchMatMul}
 * to split it into 2-D XNNPACK products on wasm (≥ {@link SPLIT_THRESHOLD} multiply-adds): the
 * path it takes when none is given.
 */
export function productSplits(rows: number, inner: number, columns: number): boolean {
  return rows * inner * columns >= SPLIT_THRESHOLD;
}

/**
 * Batched matrix product `[..., M, K]·[..., K, N]` (or `·[..., N, K]ᵀ` with `transposeB`) over
 * identical batch dimensions. On the wasm backend, when each product is large
 * ({@link productSplits}, e.g. attention over a long prompt), it runs one 2-D XNNPACK product per
 * batch entry instead of tfjs's generic batched loop; otherwise (e.g. the few queries of a decode
 * step) it is `tf.matMul`. Differentiable either way.
 *
 * @param path the wasm path to take whatever the size (ignored on other backends). With
 *   `batched`, a batch of one product also takes the generic loop (tfjs-wasm would otherwise
 *   hand it to XNNPACK: `b` is transposed so that it does not), so every entry is rounded the
 *   same way however many entries the call holds. Default: chosen by size.
 */
export function batchMatMul(
  a: tf.Tensor,
  b: tf.Tensor,
  transposeB = false,
  path?: MatMulPath,
): tf.Tensor {
  const batchShape = a.shape.slice(0, -2);
  const [rows, inner] = a.shape.slice(-2) as [number, number];
  const columns = b.shape[transposeB ? b.rank - 2 : b.rank - 1]!;
  if (tf.getBackend() !== 'wasm') return tf.matMul(a, b, false, transposeB);
  const chosen = path ?? (productSplits(rows, inner, columns) ? 'split' : 'batched');
  const count = batchShape.reduce((x, y) => x * y, 1);
  if (chosen === 'batched') {
    if (path === undefined || transposeB || count > 1) return tf.matMul(a, b, false, transposeB);
    return tf.tidy(() => tf.matMul(a, swapLastAxes(b), false, true));
  }
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

/** `x` with its last two axes swapped. */
function swapLastAxes(x: tf.Tensor): tf.Tensor {
  const axes = x.shape.map((_, i) => i);
  axes.splice(-2, 2, x.rank - 1, x.rank - 2);
  return tf.transpose(x, axes);
}
