import { Rng } from '@lethe/core';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ControllerTensorName, SolControllerConfig } from '../../src/index';
import { ControllerGraph } from '../../src/train/index';
import { randomEpisodes, randomParameters } from '../fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

const TINY: SolControllerConfig = {
  inputSize: 3,
  width: 8,
  heads: 2,
  mlpRatio: 2,
  actionDim: 3,
  actions: 4,
  maxHorizon: 6,
};
const BATCH = 2;
const STEPS = 5;

/** A term of every kind the trainer will use: log π of chosen actions and a value regression. */
function lossOf(graph: ControllerGraph): (() => tf.Scalar) & { constants: tf.Tensor[] } {
  const episodes = randomEpisodes(TINY, BATCH, STEPS, 41);
  const rng = new Rng(42);
  const chosen = tf.oneHot(
    tf.tensor1d(
      Array.from(rng.uniform(BATCH * STEPS), (u) => Math.floor(u * TINY.actions)),
      'int32',
    ),
    TINY.actions,
  );
  const advantages = tf.tensor1d(rng.normal(BATCH * STEPS));
  const returns = tf.tensor2d(rng.normal(BATCH * STEPS), [BATCH, STEPS]);
  const loss = () =>
    tf.tidy(() => {
      const { logits, values } = graph.forward(episodes);
      const logProbabilities = tf.logSoftmax(tf.reshape(logits, [BATCH * STEPS, TINY.actions]));
      const picked = tf.sum(tf.mul(logProbabilities, tf.cast(chosen, 'float32')), 1);
      const policy = tf.neg(tf.mean(tf.mul(picked, advantages)));
      const value = tf.mean(tf.square(tf.sub(values, returns)));
      return tf.add(policy, tf.mul(value, 0.5)) as tf.Scalar;
    });
  return Object.assign(loss, { constants: [chosen, advantages, returns] });
}

const CHECKED: ControllerTensorName[] = [
  'input.weight',
  'action_embedding.weight',
  'action_projection.weight',
  'position_embedding.weight',
  'block.attention_norm.weight',
  'block.attention.query.weight',
  'block.attention.key.weight',
  'block.attention.query.bias',
  'block.attention.value.weight',
  'block.attention.output.bias',
  'block.mlp.up.weight',
  'block.mlp.down.bias',
  'final_norm.bias',
  'policy_head.weight',
  'value_head.weight',
];

/** Central differences of `loss` at `indices` of `variable`, step `h`. */
function centralDifferences(
  loss: () => tf.Scalar,
  variable: tf.Variable,
  indices: number[],
  h: number,
): number[] {
  const original = (variable.dataSync() as Float32Array).slice();
  const at = (index: number, delta: number) => {
    const values = original.slice();
    values[index] = values[index]! + delta;
    tf.tidy(() => variable.assign(tf.tensor(values, variable.shape)));
    const l = loss();
    const value = l.dataSync()[0]!;
    l.dispose();
    return value;
  };
  const out = indices.map((i) => (at(i, h) - at(i, -h)) / (2 * h));
  tf.tidy(() => variable.assign(tf.tensor(original, variable.shape)));
  return out;
}

/** ‖a − b‖ / ‖b‖. */
function relativeError(a: number[], b: number[]): number {
  let difference = 0;
  let norm = 0;
  b.forEach((v, i) => {
    difference += (a[i]! - v) ** 2;
    norm += v * v;
  });
  return Math.sqrt(difference / norm);
}

/** Float32 forward, h = 1e-2: truncation and rounding errors stay below 5e-4 here. */
const TOLERANCE = 5e-3;

describe('ControllerGraph gradients', () => {
  it('match central finite differences of the forward (a few entries of every kind of tensor)', () => {
    const graph = new ControllerGraph(randomParameters(TINY, 40));
    const loss = lossOf(graph);
    const names = CHECKED.map((name) => graph.variables.get(name)!);
    const { grads, value } = tf.variableGrads(loss, names);
    value.dispose();
    const pick = new Rng(43);
    const errors: Record<string, number> = {};
    for (const name of CHECKED) {
      const variable = graph.variables.get(name)!;
      const gradient = grads[variable.name]!.dataSync() as Float32Array;
      // the entry with the largest gradient, so that the check is not about zeros, and 3 random
      let largest = 0;
      gradient.forEach((g, i) => {
        if (Math.abs(g) > Math.abs(gradient[largest]!)) largest = i;
      });
      const indices = [
        largest,
        ...Array.from(pick.uniform(3), (u) => Math.floor(u * gradient.length)),
      ];
      const analytic = indices.map((i) => gradient[i]!);
      expect(Math.abs(analytic[0]!)).toBeGreaterThan(1e-3);
      const numeric = centralDifferences(loss, variable, indices, 1e-2);
      errors[name] = relativeError(analytic, numeric);
      // the tolerance has teeth: a gradient 2% off, or one entry of the wrong sign, fails it
      expect(
        relativeError(
          analytic.map((g) => g * 1.02),
          numeric,
        ),
      ).toBeGreaterThan(TOLERANCE);
      expect(relativeError([-analytic[0]!, ...analytic.slice(1)], numeric)).toBeGreaterThan(
        TOLERANCE,
      );
    }
    // measured here: every relative error below 5e-4
    expect(Object.entries(errors).filter(([, error]) => !(error < TOLERANCE))).toEqual([]);
    tf.dispose([...Object.values(grads), ...loss.constants]);
    graph.dispose();
  });
});
