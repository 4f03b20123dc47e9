import { type BackendName, initBackend } from '../src/backend';
import { Rng } from '../src/rng';
import { tf } from '../src/tf';

/** One op of the cross-backend suite: builds inputs from a seeded Rng and returns a tensor. */
export interface SuiteOp {
  readonly name: string;
  readonly run: (rng: Rng) => tf.Tensor;
}

const t = (rng: Rng, shape: number[]) => rng.normalTensor(shape);

/**
 * The ops the model and policies use, each with seeded inputs. Gradients are included as ops
 * so that every backend's gradient kernels are compared too.
 */
export const OP_SUITE: readonly SuiteOp[] = [
  { name: 'matMul', run: (r) => tf.matMul(t(r, [5, 7]), t(r, [7, 3])) },
  {
    name: 'batched matMul transposeB',
    run: (r) => tf.matMul(t(r, [2, 4, 5, 8]), t(r, [2, 4, 6, 8]), false, true),
  },
  { name: 'softmax', run: (r) => tf.softmax(t(r, [3, 9])) },
  { name: 'logSoftmax', run: (r) => tf.logSoftmax(t(r, [3, 9])) },
  {
    name: 'sum/mean/max',
    run: (r) => {
      const x = t(r, [4, 6, 5]);
      return tf.concat([tf.sum(x, 1), tf.mean(x, 1), tf.max(x, 1)], 1);
    },
  },
  {
    name: 'exp/log/rsqrt/sigmoid',
    run: (r) => {
      const x = tf.abs(t(r, [16]));
      return tf.stack([tf.exp(x), tf.log(tf.add(x, 1)), tf.rsqrt(tf.add(x, 1)), tf.sigmoid(x)]);
    },
  },
  { name: 'gather', run: (r) => tf.gather(t(r, [10, 4]), tf.tensor1d([3, 1, 9, 3], 'int32')) },
  {
    name: 'transpose/reshape/slice',
    run: (r) =>
      tf.slice(tf.reshape(tf.transpose(t(r, [2, 3, 4]), [2, 0, 1]), [4, 6]), [1, 2], [2, 3]),
  },
  {
    name: 'where/greater',
    run: (r) => {
      const x = t(r, [12]);
      return tf.where(tf.greater(x, 0), x, tf.mul(x, 0.1));
    },
  },
  { name: 'topk values', run: (r) => tf.topk(t(r, [3, 20]), 5).values },
  { name: 'cumsum', run: (r) => tf.cumsum(t(r, [3, 7]), 1) },
  {
    name: 'grad of attention-like composite',
    run: (r) => {
      const q = t(r, [4, 8]);
      const k = t(r, [6, 8]);
      const v = t(r, [6, 8]);
      return tf.grad((kk: tf.Tensor) =>
        tf.sum(
          tf.mul(
            tf.matMul(tf.softmax(tf.matMul(q, kk, false, true)), v),
            tf.slice(v, [0, 0], [4, 8]),
          ),
        ),
      )(k);
    },
  },
  {
    name: 'grad of gather (embedding)',
    run: (r) => {
      const table = t(r, [10, 4]);
      const ids = tf.tensor1d([3, 1, 9, 3], 'int32');
      return tf.grad((w: tf.Tensor) => tf.sum(tf.square(tf.gather(w, ids))))(table);
    },
  },
];

/** Runs every suite op on `backend` with the same seeds and returns the values by op name. */
export async function runSuite(
  backend: Exclude<BackendName, 'auto'>,
): Promise<Map<string, Float32Array>> {
  await initBackend(backend);
  const out = new Map<string, Float32Array>();
  for (const [i, op] of OP_SUITE.entries()) {
    const values = tf.tidy(() => op.run(new Rng(1000 + i)));
    out.set(op.name, (await values.data()) as Float32Array);
    values.dispose();
  }
  return out;
}

/** Largest `|a - b| / (1 + |b|)` over two equally long arrays (Infinity if lengths differ). */
export function maxScaledDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!));
    if (Number.isNaN(d)) return Number.NaN;
    if (d > worst) worst = d;
  }
  return worst;
}
