import { initBackend, Rng, tf } from '@lethe/tensor';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { groupedQueryAttention } from '../../src/decoder/attention';
import { SPLIT_THRESHOLD } from '../../src/decoder/batch-matmul';
import { HIDDEN_LOGIT } from '../../src/decoder/masks';
import { attentionOutput } from '../../src/decoder/recomputed-attention';
import { maxAbsDiff } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Sizes of one attention call; the bias is `[1, 1, T, S]` (causal), `[B, Hkv, T, S]` or `[B, Hkv, 1, S]`. */
interface Case {
  readonly batch: number;
  readonly kvHeads: number;
  readonly group: number;
  readonly length: number;
  readonly keyCount: number;
  readonly headDim: number;
  readonly bias: 'causal' | 'full' | 'keys';
  readonly seed: number;
}

interface Operands {
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  readonly bias: Float32Array;
  readonly biasShape: number[];
  /** Weights of the loss `Σ weight ⊙ output`. */
  readonly weight: Float32Array;
}

function biasShape(c: Case): number[] {
  const { batch, kvHeads, length, keyCount } = c;
  if (c.bias === 'causal') return [1, 1, length, keyCount];
  return c.bias === 'full' ? [batch, kvHeads, length, keyCount] : [batch, kvHeads, 1, keyCount];
}

/**
 * Random operands. The causal bias lets query `t` see the keys up to `S − T + t` (a prefix of
 * cached keys, then the queries' own), hidden ones at {@link HIDDEN_LOGIT}; the other biases are
 * random with about one entry in six hidden — a query may see nothing (a uniform row, the dot
 * products lost to float32 rounding against the hidden logit) unless `everyRowSees`, which keeps
 * the last key visible.
 */
function operands(c: Case, everyRowSees = false): Operands {
  const rng = new Rng(c.seed);
  const { batch, kvHeads, group, length, keyCount, headDim } = c;
  const shape = biasShape(c);
  const size = shape.reduce((a, b) => a * b, 1);
  const bias = new Float32Array(size);
  const random = rng.normal(size);
  const hidden = rng.uniform(size);
  for (let i = 0; i < size; i++) {
    if (c.bias === 'causal') {
      const t = Math.floor(i / keyCount);
      bias[i] = i % keyCount <= keyCount - length + t ? 0 : HIDDEN_LOGIT;
    } else {
      const last = i % keyCount === keyCount - 1;
      bias[i] = hidden[i]! < 1 / 6 && !(everyRowSees && last) ? HIDDEN_LOGIT : random[i]!;
    }
  }
  return {
    q: rng.normal(batch * kvHeads * group * length * headDim),
    k: rng.normal(batch * kvHeads * keyCount * headDim),
    v: rng.normal(batch * kvHeads * keyCount * headDim),
    bias,
    biasShape: shape,
    weight: rng.normal(batch * kvHeads * group * length * headDim),
  };
}

interface Tensors {
  readonly q: tf.Tensor;
  readonly k: tf.Tensor;
  readonly v: tf.Tensor;
  readonly bias: tf.Tensor;
  readonly weight: tf.Tensor;
}

function tensorsOf(c: Case, o: Operands): Tensors {
  const { batch, kvHeads, group, length, keyCount, headDim } = c;
  const queryShape = [batch, kvHeads * group, length, headDim];
  return {
    q: tf.tensor(o.q, queryShape),
    k: tf.tensor(o.k, [batch, kvHeads, keyCount, headDim]),
    v: tf.tensor(o.v, [batch, kvHeads, keyCount, headDim]),
    bias: tf.tensor(o.bias, o.biasShape),
    weight: tf.tensor(o.weight, queryShape),
  };
}

type Attend = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, bias: tf.Tensor) => tf.Tensor;

const recomputed: Attend = attentionOutput;
const taped: Attend = (q, k, v, bias) => groupedQueryAttention(q, k, v, bias).output;

/** The attention output and the gradients of `Σ weight ⊙ output` with respect to q, k, v, bias. */
function run(attend: Attend, t: Tensors): Float32Array[] {
  return tf.tidy(() => {
    const loss = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, bias: tf.Tensor) =>
      tf.sum(tf.mul(attend(q, k, v, bias), t.weight));
    const grads = tf.grads(loss)([t.q, t.k, t.v, t.bias]);
    const output = attend(t.q, t.k, t.v, t.bias);
    return [output, ...grads].map((x) => x.dataSync() as Float32Array);
  });
}

/** `Σ weight ⊙ softmax(q·kᵀ/√d + bias)·v` in float64, straight from the definition. */
function referenceLoss(
  c: Case,
  o: { q: Float64Array; k: Float64Array; v: Float64Array; bias: Float64Array },
  weight: Float32Array,
): number {
  const { batch, kvHeads, group, length, keyCount, headDim } = c;
  const shape = biasShape(c);
  let loss = 0;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < kvHeads * group; h++) {
      const kv = Math.floor(h / group);
      for (let t = 0; t < length; t++) {
        const logits = new Float64Array(keyCount);
        const row = ((b * kvHeads * group + h) * length + t) * headDim;
        for (let s = 0; s < keyCount; s++) {
          const key = ((b * kvHeads + kv) * keyCount + s) * headDim;
          let dot = 0;
          for (let d = 0; d < headDim; d++) dot += o.q[row + d]! * o.k[key + d]!;
          const at = [b, kv, t, s].map((index, axis) => (shape[axis] === 1 ? 0 : index));
          const biasIndex =
            ((at[0]! * shape[1]! + at[1]!) * shape[2]! + at[2]!) * shape[3]! + at[3]!;
          logits[s] = dot / Math.sqrt(headDim) + o.bias[biasIndex]!;
        }
        const top = Math.max(...logits);
        const exps = logits.map((x) => Math.exp(x - top));
        const total = exps.reduce((a, x) => a + x, 0);
        for (let d = 0; d < headDim; d++) {
          let out = 0;
          for (let s = 0; s < keyCount; s++) {
            out += (exps[s]! / total) * o.v[((b * kvHeads + kv) * keyCount + s) * headDim + d]!;
          }
          loss += weight[row + d]! * out;
        }
      }
    }
  }
  return loss;
}

/** Central differences of {@link referenceLoss} in float64 along every entry of q, k, v and bias. */
function referenceGradients(c: Case, o: Operands): Float64Array[] {
  const inputs = {
    q: Float64Array.from(o.q),
    k: Float64Array.from(o.k),
    v: Float64Array.from(o.v),
    bias: Float64Array.from(o.bias),
  };
  const step = 1e-6;
  return (['q', 'k', 'v', 'bias'] as const).map((name) => {
    const values = inputs[name];
    const gradient = new Float64Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const base = values[i]!;
      if (base === HIDDEN_LOGIT) continue; // a hidden key: exp(−1e9) has no slope to find
      values[i] = base + step;
      const plus = referenceLoss(c, inputs, o.weight);
      values[i] = base - step;
      const minus = referenceLoss(c, inputs, o.weight);
      values[i] = base;
      gradient[i] = (plus - minus) / (2 * step);
    }
    return gradient;
  });
}

/**
 * `attentionOutput` against the taped `groupedQueryAttention` on `c`'s operands: the same output
 * bits, gradients of as many entries within `tolerance`.
 */
function expectAsTaped(c: Case, tolerance: number): void {
  const t = tensorsOf(c, operands(c));
  const [output, ...grads] = run(recomputed, t);
  const [expectedOutput, ...expectedGrads] = run(taped, t);
  expect(output).toEqual(expectedOutput);
  grads.forEach((g, i) => {
    expect(g.length).toBe(expectedGrads[i]!.length);
    expect(maxAbsDiff(g, expectedGrads[i]!), ['q', 'k', 'v', 'bias'][i]).toBeLessThan(tolerance);
  });
  tf.dispose(Object.values(t));
}

const caseArbitrary = fc
  .record({
    batch: fc.integer({ min: 1, max: 2 }),
    kvHeads: fc.integer({ min: 1, max: 2 }),
    group: fc.constantFrom(1, 2, 4),
    length: fc.integer({ min: 1, max: 9 }),
    extraKeys: fc.integer({ min: 0, max: 6 }),
    headDim: fc.constantFrom(2, 4, 8),
    bias: fc.constantFrom('causal' as const, 'full' as const, 'keys' as const),
    seed: fc.integer({ min: 0, max: 1 << 30 }),
  })
  .map(({ extraKeys, ...rest }): Case => ({ ...rest, keyCount: rest.length + extraKeys }));

describe('attentionOutput: attention whose backward recomputes the probabilities', () => {
  it('forward bit for bit and gradients as the taped groupedQueryAttention (fast-check)', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        expectAsTaped(c, 1e-5);
      }),
      { numRuns: 60 },
    );
  });

  it('gradients match float64 central differences of the definition (fast-check)', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        // a query that sees nothing has a flat loss in float32 but not in float64: not compared
        const o = operands(c, true);
        const t = tensorsOf(c, o);
        const [, ...grads] = run(recomputed, t);
        const expected = referenceGradients(c, o);
        grads.forEach((g, i) => {
          for (let j = 0; j < g.length; j++) {
            const error = Math.abs(g[j]! - expected[i]![j]!);
            expect(error, `${['q', 'k', 'v', 'bias'][i]}[${j}]`).toBeLessThan(
              1e-4 * (1 + Math.abs(expected[i]![j]!)),
            );
          }
        });
        tf.dispose(Object.values(t));
      }),
      { numRuns: 40 },
    );
  });

  it('a constant bias (biasGradient false) gets zeros, the other gradients unchanged', () => {
    const c: Case = {
      batch: 2,
      kvHeads: 2,
      group: 2,
      length: 5,
      keyCount: 7,
      headDim: 4,
      bias: 'keys',
      seed: 9,
    };
    const t = tensorsOf(c, operands(c));
    const [output, dq, dk, dv, dBias] = run((q, k, v, b) => attentionOutput(q, k, v, b, false), t);
    const expected = run(recomputed, t);
    expect([output, dq, dk, dv]).toEqual(expected.slice(0, 4));
    expect(dBias).toEqual(new Float32Array(expected[4]!.length));
    expect(maxAbsDiff(expected[4]!, new Float32Array(expected[4]!.length))).toBeGreaterThan(1e-3);
    tf.dispose(Object.values(t));
  });

  it('sizes past the split threshold (one 2-D product per head) agree with the taped path', () => {
    const c: Case = {
      batch: 2,
      kvHeads: 2,
      group: 2,
      length: 96,
      keyCount: 128,
      headDim: 16,
      bias: 'causal',
      seed: 3,
    };
    expect(c.group * c.length * c.headDim * c.keyCount).toBeGreaterThanOrEqual(SPLIT_THRESHOLD);
    expectAsTaped(c, 1e-4);
  });

  it('the tape holds none of its scores, and nothing is left behind', () => {
    const c: Case = {
      batch: 1,
      kvHeads: 2,
      group: 2,
      length: 256,
      keyCount: 256,
      headDim: 8,
      bias: 'causal',
      seed: 4,
    };
    const t = tensorsOf(c, operands(c));
    const score = 4 * c.batch * c.kvHeads * c.group * c.length * c.keyCount;
    const held: Record<string, number> = {};
    const tensors = tf.memory().numTensors;
    for (const [name, attend] of [
      ['recomputed', recomputed],
      ['taped', taped],
    ] as const) {
      const before = tf.memory().numBytes;
      const gradient = tf.grad((q: tf.Tensor) => {
        const output = attend(q, t.k, t.v, t.bias);
        held[name] = tf.memory().numBytes - before;
        return tf.sum(tf.mul(output, t.weight));
      })(t.q);
      gradient.dispose();
    }
    // what recording keeps: the output and the copies of its inputs tfjs saves for the backward
    const bytes = (x: tf.Tensor) => 4 * x.size;
    expect(held.recomputed).toBe(2 * bytes(t.q) + bytes(t.k) + bytes(t.v) + bytes(t.bias));
    expect(held.taped! / score).toBeGreaterThan(3);
    expect(tf.memory().numTensors).toBe(tensors);
    tf.dispose(Object.values(t));
  });
});
