import { initBackend, Rng, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchMatMul, SPLIT_THRESHOLD, splitBatchMatMul } from '../../src/decoder/batch-matmul';
import { linear } from '../../src/decoder/linear';
import { maxAbsDiff } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const rng = new Rng(77);
const normal = (shape: number[]) => rng.normalTensor(shape);

describe('batchMatMul', () => {
  // A batch of one product (one sequence, one KV head) too: tfjs's unstack has no gradient there.
  for (const [transposeB, batch] of [
    [false, [2, 3]],
    [true, [2, 3]],
    [false, [1, 1]],
    [true, [1, 1]],
  ] as const) {
    it(`split products (transposeB ${transposeB}, batch [${batch}]) equal tf.matMul, values and gradients`, () => {
      const [rows, inner, columns] = [128, 32, 256];
      expect(rows * inner * columns).toBeGreaterThanOrEqual(SPLIT_THRESHOLD);
      const a = normal([...batch, rows, inner]);
      const b = normal(transposeB ? [...batch, columns, inner] : [...batch, inner, columns]);
      const weight = normal([...batch, rows, columns]);
      const loss = (f: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) =>
        tf.sum(tf.mul(f(x, y), weight));
      const ours = tf.grads(loss((x, y) => batchMatMul(x, y, transposeB)));
      const theirs = tf.grads(loss((x, y) => tf.matMul(x, y, false, transposeB)));
      const [da, db] = ours([a, b]);
      const [ea, eb] = theirs([a, b]);
      const value = batchMatMul(a, b, transposeB);
      const expected = tf.matMul(a, b, false, transposeB);
      expect(value.shape).toEqual(expected.shape);
      expect(maxAbsDiff(value.dataSync(), expected.dataSync())).toBeLessThan(1e-4);
      expect(maxAbsDiff(da!.dataSync(), ea!.dataSync())).toBeLessThan(1e-3);
      expect(maxAbsDiff(db!.dataSync(), eb!.dataSync())).toBeLessThan(1e-3);
      tf.dispose([a, b, weight, da!, db!, ea!, eb!, value, expected]);
    });
  }

  it('runs tf.matMul itself below the threshold, and splits the same product on request', () => {
    const [rows, inner, columns] = [16, 8, 16];
    expect(rows * inner * columns).toBeLessThan(SPLIT_THRESHOLD);
    const a = normal([3, rows, inner]);
    const b = normal([3, inner, columns]);
    const expected = tf.matMul(a, b);
    const below = batchMatMul(a, b);
    const split = splitBatchMatMul(a, b, false);
    expect(Array.from(below.dataSync())).toEqual(Array.from(expected.dataSync()));
    expect(split.shape).toEqual(expected.shape);
    expect(maxAbsDiff(split.dataSync(), expected.dataSync())).toBeLessThan(1e-5);
    tf.dispose([a, b, expected, below, split]);
  });
});

describe('linear', () => {
  it('equals x·Wᵀ + b with the PyTorch gradient', () => {
    const x = normal([3, 5, 16]);
    const w = normal([24, 16]);
    const bias = normal([24]);
    const f = (input: tf.Tensor, weight: tf.Tensor) =>
      tf.sum(tf.square(linear(input, weight, bias)));
    const g = (input: tf.Tensor, weight: tf.Tensor) =>
      tf.sum(tf.square(tf.add(tf.matMul(tf.reshape(input, [15, 16]), weight, false, true), bias)));
    const [dx, dw] = tf.grads(f)([x, w]);
    const [ex, ew] = tf.grads(g)([x, w]);
    const y = linear(x, w, bias);
    expect(y.shape).toEqual([3, 5, 24]);
    const expected = tf.add(tf.matMul(tf.reshape(x, [15, 16]), w, false, true), bias);
    expect(maxAbsDiff(y.dataSync(), expected.dataSync())).toBeLessThan(1e-5);
    expect(maxAbsDiff(dx!.dataSync(), ex!.dataSync())).toBeLessThan(1e-4);
    expect(maxAbsDiff(dw!.dataSync(), ew!.dataSync())).toBeLessThan(1e-4);
    tf.dispose([x, w, bias, dx!, dw!, ex!, ew!, y, expected]);
  });

  it('gives each row the same float32 values whichever operand the forward transposes', () => {
    // 200 rows of 16 into 24 outputs move the weight (x·(Wᵀ)); one row moves x ((W·xᵀ)ᵀ).
    const x = normal([200, 16]);
    const w = normal([24, 16]);
    const all = linear(x, w).dataSync();
    const rows = tf.unstack(x);
    rows.forEach((row, r) => {
      const one = tf.tidy(() => linear(tf.reshape(row, [1, 16]), w));
      expect(Array.from(one.dataSync())).toEqual(Array.from(all.subarray(r * 24, (r + 1) * 24)));
      one.dispose();
    });
    tf.dispose([x, w, ...rows]);
  });
});
