import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { policyLoss } from '../src/index';

beforeAll(async () => {
  await initBackend('wasm');
});

const t2 = (rows: number[][]) => tf.tensor2d(rows);
const value = (x: tf.Scalar) => {
  const v = x.dataSync()[0]!;
  x.dispose();
  return v;
};

describe('policyLoss values (hand-computed)', () => {
  // ratios e^0.1, 1 | 1, (masked); advantages 1 and −2; ε = 0.2 (no clipping active).
  const inputs = () => ({
    logProbs: t2([
      [-1, -2],
      [-0.5, -3],
    ]),
    oldLogProbs: t2([
      [-1.1, -2],
      [-0.5, -2.5],
    ]),
    advantages: tf.tensor1d([1, -2]),
    mask: t2([
      [1, 1],
      [1, 0],
    ]),
  });
  const e01 = Math.exp(0.1);

  it('constant (Dr. GRPO, ÷ B), token-mean and sequence-mean aggregations', () => {
    const sum = e01 + 1 - 2;
    expect(value(policyLoss(inputs()))).toBeCloseTo(-sum / 2, 5);
    expect(value(policyLoss(inputs(), { aggregation: 'constant', normalizer: 10 }))).toBeCloseTo(
      -sum / 10,
      5,
    );
    expect(value(policyLoss(inputs(), { aggregation: 'token-mean' }))).toBeCloseTo(-sum / 3, 5);
    expect(value(policyLoss(inputs(), { aggregation: 'sequence-mean' }))).toBeCloseTo(
      -((e01 + 1) / 2 - 2) / 2,
      5,
    );
  });

  it('clips optimistic ratios and keeps pessimistic ones', () => {
    const logProbs = t2([[0.5, 0.5]]);
    const oldLogProbs = t2([[0, 0]]);
    const mask = t2([[1, 0]]);
    const up = policyLoss({ logProbs, oldLogProbs, mask, advantages: tf.tensor1d([1]) });
    expect(value(up)).toBeCloseTo(-1.2, 5); // min(e^0.5, 1.2) · 1
    const down = policyLoss({ logProbs, oldLogProbs, mask, advantages: tf.tensor1d([-1]) });
    expect(value(down)).toBeCloseTo(Math.exp(0.5), 5); // min(−e^0.5, −1.2) = −e^0.5
    const per = policyLoss({ logProbs, oldLogProbs, mask, advantages: t2([[1, 100]]) });
    expect(value(per)).toBeCloseTo(-1.2, 5); // per-action advantages, the masked one ignored
  });

  it('adds the entropy bonus and the k3 KL penalty', () => {
    const base = inputs();
    const entropy = t2([
      [0.3, 0.1],
      [0.2, 9],
    ]);
    const referenceLogProbs = t2([
      [-1.5, -2],
      [-0.5, -3],
    ]);
    const k3 = Math.exp(-0.5) + 0.5 - 1; // only [0, 0] differs from the reference
    const got = policyLoss(
      { ...base, entropy, referenceLogProbs },
      { entropyCoefficient: 0.01, klCoefficient: 0.1 },
    );
    expect(value(got)).toBeCloseTo(-(e01 - 1) / 2 - (0.01 * 0.6) / 2 + (0.1 * k3) / 2, 5);
  });
});

describe('policyLoss gradients', () => {
  it('match central finite differences with respect to the log-probs', () => {
    const logData = [-1.2, -0.7, -2.1, -0.4, -1.6, -0.9];
    const old = t2([
      [-1.0, -0.9, -2.0],
      [-0.1, -1.7, -0.9],
    ]);
    const ref = t2([
      [-1.1, -0.5, -2.4],
      [-0.6, -1.2, -1.0],
    ]);
    const advantages = t2([
      [0.7, -1.3, 0.4],
      [-0.2, 1.1, 2.0],
    ]);
    const mask = t2([
      [1, 1, 1],
      [1, 1, 0],
    ]);
    const f = (lp: tf.Tensor) =>
      policyLoss(
        { logProbs: lp, oldLogProbs: old, advantages, mask, referenceLogProbs: ref },
        { clipRange: 0.2, aggregation: 'token-mean', klCoefficient: 0.3 },
      );
    const x = tf.tensor2d(logData, [2, 3]);
    const analytic = tf.grad(f)(x).dataSync();
    const h = 1e-2;
    logData.forEach((_, i) => {
      const plus = logData.map((v, j) => (j === i ? v + h : v));
      const minus = logData.map((v, j) => (j === i ? v - h : v));
      const numeric =
        (value(f(tf.tensor2d(plus, [2, 3]))) - value(f(tf.tensor2d(minus, [2, 3])))) / (2 * h);
      expect(analytic[i]!).toBeCloseTo(numeric, 3);
    });
  });

  it('on-policy (no oldLogProbs) is the plain policy gradient −A·m / B, leak-free', () => {
    const before = tf.memory().numTensors;
    const logProbs = t2([
      [-1, -2, -0.5],
      [-0.3, -0.2, -4],
    ]);
    const advantages = tf.tensor1d([0.5, -1.5]);
    const mask = t2([
      [1, 1, 0],
      [1, 1, 1],
    ]);
    const g = tf.grad((lp: tf.Tensor) => policyLoss({ logProbs: lp, advantages, mask }))(logProbs);
    expect(Array.from(g.dataSync(), (v) => v + 0)).toEqual([-0.25, -0.25, 0, 0.75, 0.75, 0.75]);
    expect(value(policyLoss({ logProbs, advantages, mask }))).toBeCloseTo(
      -(2 * 0.5 - 3 * 1.5) / 2,
      6,
    );
    tf.dispose([logProbs, advantages, mask, g]);
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('policyLoss bad input', () => {
  // Built lazily: the backend is initialised in beforeAll.
  const logProbs = () => tf.zeros([2, 3]);
  const mask = () => tf.ones([2, 3]);
  const advantages = () => tf.zeros([2]);
  const cases: [() => unknown, string, string][] = [
    [
      () => policyLoss({ logProbs: tf.zeros([6]), mask: mask(), advantages: advantages() }),
      'E_SHAPE',
      'logProbs',
    ],
    [
      () => policyLoss({ logProbs: logProbs(), mask: tf.ones([2, 2]), advantages: advantages() }),
      'E_SHAPE',
      'mask',
    ],
    [
      () => policyLoss({ logProbs: logProbs(), mask: mask(), advantages: tf.zeros([3]) }),
      'E_SHAPE',
      'advantages',
    ],
    [
      () =>
        policyLoss(
          { logProbs: logProbs(), mask: mask(), advantages: advantages() },
          { clipRange: 0 },
        ),
      'E_ARG',
      'clipRange',
    ],
    [
      () =>
        policyLoss(
          { logProbs: logProbs(), mask: mask(), advantages: advantages() },
          { normalizer: -1 },
        ),
      'E_ARG',
      'normalizer',
    ],
    [
      () =>
        policyLoss(
          { logProbs: logProbs(), mask: mask(), advantages: advantages() },
          { aggregation: 'mean' as never },
        ),
      'E_ARG',
      'aggregation',
    ],
    [
      () =>
        policyLoss(
          { logProbs: logProbs(), mask: mask(), advantages: advantages() },
          { klCoefficient: 0.1 },
        ),
      'E_ARG',
      'klCoefficient',
    ],
  ];
  it.each(cases.map(([run, code, argument]) => [argument, code, run] as const))(
    'names %s',
    (argument, code, run) => {
      expect(run).toThrowError(expect.objectContaining({ code, argument }));
    },
  );
});
