import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { gumbelTopKLogProb } from '../../src/index';
import { type GumbelRound, gumbelTopKLogProbTensor } from '../../src/train/index';
import { lcg } from '../helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** A ragged batch: logits `[R, Nmax]` (padding filled with `pad`) and its rounds. */
interface Batch {
  values: Float32Array;
  columns: number;
  rounds: GumbelRound[];
}

function batch(rows: { logits: number[]; order: number[] }[], columns: number, pad = 0): Batch {
  const values = new Float32Array(rows.length * columns).fill(pad);
  rows.forEach((row, r) => {
    values.set(row.logits, r * columns);
  });
  return {
    values,
    columns,
    rounds: rows.map((row) => ({ blocks: row.logits.length, order: Int32Array.from(row.order) })),
  };
}

/** Host eq. 2 of each row, in float64, from the float32 logits the tensor sees. */
function hostLogProbs({ values, columns, rounds }: Batch): number[] {
  return rounds.map((round, r) =>
    gumbelTopKLogProb(values.subarray(r * columns, r * columns + round.blocks), round.order),
  );
}

function tensorLogProbs({ values, columns, rounds }: Batch): number[] {
  return tf.tidy(() => {
    const logits = tf.tensor2d(values, [rounds.length, columns]);
    return Array.from(gumbelTopKLogProbTensor(logits, rounds).dataSync());
  });
}

/** ∂/∂logits of Σ_r weight_r · logProb_r on the backend. */
function tensorGradient({ values, columns, rounds }: Batch, weights: number[]): Float32Array {
  return tf.tidy(() => {
    const logits = tf.tensor2d(values, [rounds.length, columns]);
    const w = tf.tensor1d(weights);
    const grad = tf.grad((x: tf.Tensor) =>
      tf.sum(tf.mul(gumbelTopKLogProbTensor(x as tf.Tensor2D, rounds), w)),
    )(logits);
    return grad.dataSync() as Float32Array;
  });
}

/** Central finite differences of the float64 host version (h = 1e-5). */
function finiteDifferences({ values, columns, rounds }: Batch, weights: number[]): Float64Array {
  const h = 1e-5;
  const out = new Float64Array(values.length);
  rounds.forEach((round, r) => {
    const row = Array.from(values.subarray(r * columns, r * columns + round.blocks));
    for (let c = 0; c < round.blocks; c++) {
      const plus = row.slice();
      const minus = row.slice();
      plus[c] += h;
      minus[c] -= h;
      out[r * columns + c] =
        (weights[r] *
          (gumbelTopKLogProb(plus, round.order) - gumbelTopKLogProb(minus, round.order))) /
        (2 * h);
    }
  });
  return out;
}

const RAGGED = (pad: number) =>
  batch(
    [
      { logits: [0.3, -1.2, 2.5, 0.3, 0.9, -0.4], order: [2, 4, 0] }, // K < N
      { logits: [1.5, -0.5, 0.25], order: [1, 0, 2] }, // K = N: nothing unselected
      { logits: [0.7], order: [] }, // K = 0
      { logits: [], order: [] }, // an empty round
      { logits: [-2, 3, 3, 0.1, -0.6], order: [3] }, // ties, K = 1
    ],
    6,
    pad,
  );

describe('gumbelTopKLogProbTensor', () => {
  it('equals the host version on a ragged batch (1e-5)', () => {
    const b = RAGGED(0);
    const expected = hostLogProbs(b);
    const actual = tensorLogProbs(b);
    expect(actual[2]).toBe(0);
    expect(actual[3]).toBe(0);
    actual.forEach((v, r) => {
      expect(Math.abs(v - expected[r]!)).toBeLessThanOrEqual(
        1e-5 * Math.max(1, Math.abs(expected[r]!)),
      );
    });
  });

  it('ignores padding values, even NaN and ±Infinity', () => {
    const reference = tensorLogProbs(RAGGED(0));
    for (const pad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e30]) {
      expect(tensorLogProbs(RAGGED(pad))).toEqual(reference);
    }
  });

  it('has the gradient of the host version (central differences) and zero on padding', () => {
    const weights = [1, -0.5, 2, 1, 0.75];
    for (const pad of [0, Number.NaN]) {
      const b = RAGGED(pad);
      const grad = tensorGradient(b, weights);
      const reference = finiteDifferences(RAGGED(0), weights);
      b.rounds.forEach((round, r) => {
        for (let c = 0; c < b.columns; c++) {
          const i = r * b.columns + c;
          if (c >= round.blocks) {
            expect(grad[i], `padding [${r}, ${c}]`).toBe(0);
          } else {
            // float32: each gradient entry is a difference of softmax weights ≤ 1 built from
            // O(K) exp/log ops, so its rounding error is a few ulps of 1 (~1e-7 · K); the
            // float64 central difference is accurate to ~1e-9. 1e-5 leaves a wide margin.
            expect(Math.abs(grad[i]! - reference[i]!), `[${r}, ${c}]`).toBeLessThanOrEqual(1e-5);
          }
        }
      });
    }
  });

  it('stays exact when a row spans more than float32 exp range (log-space suffix sums)', () => {
    // With one shift (the row max, 120) the last steps would sum exp(−200 − 120) = 0 in float32.
    const b = batch(
      [
        { logits: [120, 40, -80, 0, -200, 60], order: [0, 5, 1, 3, 2] },
        { logits: [-150, 150, 0], order: [1, 2, 0] },
      ],
      6,
    );
    const expected = hostLogProbs(b);
    const actual = tensorLogProbs(b);
    actual.forEach((v, r) => {
      expect(Number.isFinite(v)).toBe(true);
      expect(Math.abs(v - expected[r]!)).toBeLessThanOrEqual(
        1e-5 * Math.max(1, Math.abs(expected[r]!)),
      );
    });
    const grad = tensorGradient(b, [1, 1]);
    for (const g of grad) expect(Number.isFinite(g)).toBe(true);
  });

  it('equals the host version and its gradient on random ragged batches (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.nat(), (rows, seed) => {
        const random = lcg(seed);
        const columns = 1 + Math.floor(random() * 9);
        const specs = Array.from({ length: rows }, () => {
          const blocks = Math.floor(random() * (columns + 1));
          const logits = Array.from({ length: blocks }, () =>
            random() < 0.2 ? 1 : (random() - 0.5) * 16,
          );
          const perm = logits.map((_, i) => i).sort(() => random() - 0.5);
          return { logits, order: perm.slice(0, Math.floor(random() * (blocks + 1))) };
        });
        const b = batch(specs, columns, Number.NaN);
        const expected = hostLogProbs(b);
        tensorLogProbs(b).forEach((v, r) => {
          expect(Math.abs(v - expected[r]!)).toBeLessThanOrEqual(
            1e-5 * Math.max(1, Math.abs(expected[r]!)),
          );
        });
        const weights = specs.map((_, r) => 1 - 0.3 * r);
        const grad = tensorGradient(b, weights);
        const clean = batch(specs, columns, 0);
        const reference = finiteDifferences(clean, weights);
        b.rounds.forEach((round, r) => {
          for (let c = 0; c < columns; c++) {
            const i = r * columns + c;
            if (c >= round.blocks) expect(grad[i]).toBe(0);
            else expect(Math.abs(grad[i]! - reference[i]!)).toBeLessThanOrEqual(1e-5);
          }
        });
      }),
      { numRuns: 40 },
    );
  });

  it('leaks no tensors (forward and gradient)', () => {
    const b = RAGGED(0);
    tensorLogProbs(b); // warm-up (backend-level caches)
    tensorGradient(b, [1, 1, 1, 1, 1]);
    const before = tf.memory().numTensors;
    const logits = tf.tensor2d(b.values, [b.rounds.length, b.columns]);
    const out = gumbelTopKLogProbTensor(logits, b.rounds);
    expect(tf.memory().numTensors).toBe(before + 2);
    out.dispose();
    logits.dispose();
    tensorGradient(b, [1, 1, 1, 1, 1]);
    const empty = tf.tensor2d(new Float32Array(6), [2, 3]);
    gumbelTopKLogProbTensor(empty, [
      { blocks: 3, order: new Int32Array(0) },
      { blocks: 0, order: new Int32Array(0) },
    ]).dispose();
    empty.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('validates shapes, dtypes and rounds', () => {
    const logits = tf.zeros([2, 3]) as tf.Tensor2D;
    const round = (blocks: number, order: number[]) => ({ blocks, order: Int32Array.from(order) });
    expectLetheError(() => gumbelTopKLogProbTensor(logits, [round(3, [0])]), 'E_SHAPE', 'rounds');
    expectLetheError(
      () => gumbelTopKLogProbTensor(logits, [round(4, [0]), round(3, [])]),
      'E_ARG',
      'rounds[0].blocks',
    );
    expectLetheError(
      () => gumbelTopKLogProbTensor(logits, [round(3, [0]), round(2, [1, 1])]),
      'E_ARG',
      'rounds[1].order',
    );
    expectLetheError(
      () => gumbelTopKLogProbTensor(logits, [round(3, [0]), round(2, [2])]),
      'E_ARG',
      'rounds[1].order',
    );
    const ints = tf.zeros([1, 3], 'int32') as tf.Tensor2D;
    expectLetheError(() => gumbelTopKLogProbTensor(ints, [round(3, [])]), 'E_DTYPE', 'logits');
    const flat = tf.zeros([3]) as unknown as tf.Tensor2D;
    expectLetheError(() => gumbelTopKLogProbTensor(flat, [round(3, [])]), 'E_SHAPE', 'logits');
    tf.dispose([logits, ints, flat]);
  });
});
