import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { crossEntropyLoss } from '../../src/train';
import { values } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Brute force in Float64: per-position −log(exp(z_y) / Σ exp(z)), weighted mean. */
function crossEntropyReference(
  logits: Float32Array,
  targets: Int32Array,
  mask: Float32Array,
  vocab: number,
): { loss: number; grad: number[] } {
  const rows = targets.length;
  const total = mask.reduce((a, b) => a + b, 0);
  let loss = 0;
  const grad: number[] = new Array(rows * vocab).fill(0);
  for (let r = 0; r < rows; r++) {
    const z = Array.from(logits.subarray(r * vocab, (r + 1) * vocab));
    const top = Math.max(...z);
    const denominator = z.reduce((s, x) => s + Math.exp(x - top), 0);
    const probabilities = z.map((x) => Math.exp(x - top) / denominator);
    loss += (mask[r]! * -Math.log(probabilities[targets[r]!]!)) / total;
    for (let v = 0; v < vocab; v++) {
      grad[r * vocab + v] = (mask[r]! * (probabilities[v]! - (v === targets[r] ? 1 : 0))) / total;
    }
  }
  return { loss, grad };
}

function randomCase(seed: number, batch: number, time: number, vocab: number, offset = 0) {
  const rng = new Rng(seed);
  const logits = rng.normal(batch * time * vocab, offset, 3);
  const targets = Int32Array.from(rng.uniform(batch * time), (u) => Math.floor(u * vocab));
  const mask = Float32Array.from(rng.uniform(batch * time), (u) => (u < 0.7 ? 1 : 0));
  mask[0] = 1;
  return { logits, targets, mask };
}

describe('crossEntropyLoss', () => {
  it('matches brute force with and without a mask, value and gradient', () => {
    const [batch, time, vocab] = [3, 5, 7];
    const { logits, targets, mask } = randomCase(1, batch, time, vocab);
    const z = tf.tensor3d(logits, [batch, time, vocab]);
    const y = tf.tensor2d(targets, [batch, time], 'int32');
    const m = tf.tensor2d(mask, [batch, time]);
    const before = tf.memory().numTensors;
    const masked = crossEntropyLoss(z, y, m);
    const unmasked = crossEntropyLoss(z, y);
    expect(tf.memory().numTensors).toBe(before + 2);
    const refMasked = crossEntropyReference(logits, targets, mask, vocab);
    const refAll = crossEntropyReference(
      logits,
      targets,
      new Float32Array(batch * time).fill(1),
      vocab,
    );
    expect(masked.shape).toEqual([]);
    expectClose(values(masked), [refMasked.loss], 1e-5);
    expectClose(values(unmasked), [refAll.loss], 1e-5);
    const grad = tf.grad((x: tf.Tensor) => crossEntropyLoss(x, y, m))(z);
    expectClose(values(grad), refMasked.grad, 1e-4, 1e-7);
    tf.dispose([z, y, m, masked, unmasked, grad]);
  });

  it('is stable for huge logits (no overflow, correct gradient)', () => {
    const [batch, time, vocab] = [2, 3, 5];
    const { logits, targets, mask } = randomCase(2, batch, time, vocab, 0);
    const shifted = logits.map((x) => x + 5e4);
    const z = tf.tensor3d(shifted, [batch, time, vocab]);
    const y = tf.tensor2d(targets, [batch, time], 'int32');
    const m = tf.tensor2d(mask, [batch, time]);
    const loss = crossEntropyLoss(z, y, m);
    // Softmax is shift invariant: the reference uses the unshifted logits.
    const reference = crossEntropyReference(logits, targets, mask, vocab);
    expect(Number.isFinite(values(loss)[0]!)).toBe(true);
    // 5e4 in float32 has a spacing of 2^-8, so the shifted logits are rounded to ~4e-3.
    expectClose(values(loss), [reference.loss], 0, 1e-2);
    const grad = tf.grad((x: tf.Tensor) => crossEntropyLoss(x, y, m))(z);
    expectClose(values(grad), reference.grad, 0, 2e-3);
    tf.dispose([z, y, m, loss, grad]);
  });

  it('is exactly log V for uniform logits and 0-ish for a confident correct guess', () => {
    const z = tf.zeros([1, 2, 8]);
    const y = tf.tensor2d([[3, 5]], [1, 2], 'int32');
    const uniform = crossEntropyLoss(z, y);
    expectClose(values(uniform), [Math.log(8)], 1e-6);
    const confident = tf.tidy(() =>
      tf.reshape(tf.mul(tf.oneHot(tf.tensor1d([3, 5], 'int32'), 8), 40), [1, 2, 8]),
    );
    const sure = crossEntropyLoss(confident, y);
    // log(1 + 7·e^−40) is far below float32 resolution around 0.
    expect(values(sure)[0]!).toBeLessThan(1e-6);
    tf.dispose([z, y, uniform, confident, sure]);
  });

  it('rejects wrong shapes and dtypes naming the tensor', () => {
    const z = tf.zeros([2, 3, 4]);
    const y = tf.zeros([2, 3], 'int32');
    const yFloat = tf.zeros([2, 3]);
    const yShort = tf.zeros([2, 2], 'int32');
    const mWrong = tf.zeros([3, 2]);
    const z2 = tf.zeros([6, 4]);
    const zInt = tf.zeros([2, 3, 4], 'int32');
    expectLetheError(() => crossEntropyLoss(z2, y), 'E_SHAPE', 'logits');
    expectLetheError(() => crossEntropyLoss(zInt, y), 'E_DTYPE', 'logits');
    expectLetheError(() => crossEntropyLoss(z, yShort), 'E_SHAPE', 'targets');
    expectLetheError(() => crossEntropyLoss(z, yFloat), 'E_DTYPE', 'targets');
    expectLetheError(() => crossEntropyLoss(z, y, mWrong), 'E_SHAPE', 'mask');
    tf.dispose([z, y, yFloat, yShort, mWrong, z2, zInt]);
  });
});
