import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { lively, randomTokens, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const EPS = 1e-2;
const BATCH = 2;
const LENGTH = 7;

/** Sum over all positions of the next-token cross-entropy, as a scalar tensor. */
function lossOf(
  model: DecoderModel,
  inputs: tf.Tensor2D,
  targets: tf.Tensor2D,
  keyBias?: tf.Tensor[],
): tf.Scalar {
  return tf.tidy(() => {
    const { logits } = model.forward(inputs, keyBias ? { keyBias } : {});
    const logProbs = tf.logSoftmax(logits);
    const picked = tf.mul(logProbs, tf.oneHot(targets, model.config.vocab_size));
    return tf.neg(tf.sum(picked)) as tf.Scalar;
  });
}

/** Central difference of `loss` along entry `index` of `variable`, restoring it afterwards. */
function centralDifference(variable: tf.Variable, index: number, loss: () => number): number {
  const base = Float32Array.from(variable.dataSync());
  const evaluate = (delta: number) => {
    const moved = base.slice();
    moved[index]! += delta;
    tf.tidy(() => variable.assign(tf.tensor(moved, variable.shape)));
    return loss();
  };
  const plus = evaluate(EPS);
  const minus = evaluate(-EPS);
  tf.tidy(() => variable.assign(tf.tensor(base, variable.shape)));
  return (plus - minus) / (2 * EPS);
}

/** Indices of the `count` entries of largest |gradient|. */
function largest(gradient: Float32Array, count: number): number[] {
  return Array.from(gradient.keys())
    .sort((a, b) => Math.abs(gradient[b]!) - Math.abs(gradient[a]!))
    .slice(0, count);
}

function relativeError(analytic: number, numeric: number): number {
  return Math.abs(analytic - numeric) / Math.max(Math.abs(analytic), Math.abs(numeric));
}

describe('gradients of the parallel forward (wasm)', () => {
  const cases = [
    { name: 'qwen2 untied', config: tinyConfig({ model_type: 'qwen2' }) },
    { name: 'llama tied', config: tinyConfig({ tie_word_embeddings: true }) },
  ];
  for (const { name, config } of cases) {
    it(`${name}: every parameter tensor matches central differences (rel. err < 1e-2)`, () => {
      expect(tf.getBackend()).toBe('wasm');
      const model = lively(config, 5);
      const tokens = randomTokens(3, BATCH * (LENGTH + 1), config.vocab_size);
      const all = tf.tensor2d(tokens, [BATCH, LENGTH + 1], 'int32');
      const inputs = tf.slice(all, [0, 0], [BATCH, LENGTH]) as tf.Tensor2D;
      const targets = tf.slice(all, [0, 1], [BATCH, LENGTH]) as tf.Tensor2D;
      const loss = () => {
        const l = lossOf(model, inputs, targets);
        const value = l.dataSync()[0]!;
        l.dispose();
        return value;
      };
      const variables = [...model.parameters.values()];
      const { value, grads } = tf.variableGrads(() => lossOf(model, inputs, targets), variables);
      value.dispose();
      let checked = 0;
      for (const [tensorName, variable] of model.parameters) {
        const gradient = grads[variable.name]!.dataSync() as Float32Array;
        for (const index of largest(gradient, 2)) {
          const numeric = centralDifference(variable, index, loss);
          expect(Math.abs(gradient[index]!), tensorName).toBeGreaterThan(1e-3);
          expect(relativeError(gradient[index]!, numeric), `${tensorName}[${index}]`).toBeLessThan(
            1e-2,
          );
          checked++;
        }
      }
      expect(checked).toBe(2 * model.parameters.size);
      tf.dispose([all, inputs, targets, ...Object.values(grads)]);
      model.dispose();
    });
  }

  it('key biases are differentiable', () => {
    const config = tinyConfig();
    const model = lively(config, 8);
    const tokens = randomTokens(6, BATCH * (LENGTH + 1), config.vocab_size);
    const all = tf.tensor2d(tokens, [BATCH, LENGTH + 1], 'int32');
    const inputs = tf.slice(all, [0, 0], [BATCH, LENGTH]) as tf.Tensor2D;
    const targets = tf.slice(all, [0, 1], [BATCH, LENGTH]) as tf.Tensor2D;
    const biases = [0, 1].map((l) =>
      tf.tidy(() => {
        const values = tf.mul(tf.sin(tf.range(l, l + BATCH * 2 * LENGTH)), 0.5);
        return tf.variable(tf.reshape(values, [BATCH, 2, LENGTH]), true);
      }),
    );
    const loss = () => {
      const l = lossOf(model, inputs, targets, biases);
      const value = l.dataSync()[0]!;
      l.dispose();
      return value;
    };
    const { value, grads } = tf.variableGrads(() => lossOf(model, inputs, targets, biases), biases);
    value.dispose();
    for (const bias of biases) {
      const gradient = grads[bias.name]!.dataSync() as Float32Array;
      for (const index of largest(gradient, 3)) {
        expect(relativeError(gradient[index]!, centralDifference(bias, index, loss))).toBeLessThan(
          1e-2,
        );
      }
    }
    tf.dispose([all, inputs, targets, ...biases, ...Object.values(grads)]);
    model.dispose();
  });
});
