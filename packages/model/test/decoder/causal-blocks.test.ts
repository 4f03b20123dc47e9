import { initBackend, Rng, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { CAUSAL_BLOCK, causalAttentionOutput, causalBlocks } from '../../src/decoder/causal-blocks';
import { causalVisibility, visibilityToLogitBias } from '../../src/decoder/masks';
import { attentionOutput } from '../../src/decoder/recomputed-attention';
import { lively, maxAbsDiff, randomTokens, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Output and q, k, v gradients of `Σ weight ⊙ attend(q, k, v)`. */
function outputAndGradients(
  attend: (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => tf.Tensor,
  operands: tf.Tensor[],
  weight: tf.Tensor,
): Float32Array[] {
  return tf.tidy(() => {
    const loss = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
      tf.sum(tf.mul(attend(q, k, v), weight));
    const grads = tf.grads(loss)(operands);
    const [q, k, v] = operands as [tf.Tensor, tf.Tensor, tf.Tensor];
    return [attend(q, k, v), ...grads].map((t) => t.dataSync() as Float32Array);
  });
}

describe('causalAttentionOutput: causal attention in blocks of queries', () => {
  const cases = [
    {
      name: 'two full blocks and a partial one',
      batch: 1,
      kvHeads: 2,
      group: 2,
      extra: 37,
      blocks: 2,
    },
    {
      name: 'one block and one query, batch 2, group 4',
      batch: 2,
      kvHeads: 1,
      group: 4,
      extra: 1,
      blocks: 1,
    },
    { name: 'one block (not split)', batch: 1, kvHeads: 2, group: 1, extra: 0, blocks: 1 },
  ];
  for (const { name, batch, kvHeads, group, extra, blocks } of cases) {
    it(`${name}: the output and the q, k, v gradients as the whole matrix's`, () => {
      const length = blocks * CAUSAL_BLOCK + extra;
      const rng = new Rng(length);
      const headDim = 8;
      const operands = [
        rng.normalTensor([batch, kvHeads * group, length, headDim]),
        rng.normalTensor([batch, kvHeads, length, headDim]),
        rng.normalTensor([batch, kvHeads, length, headDim]),
      ];
      const weight = rng.normalTensor([batch, kvHeads * group, length, headDim]);
      const bias = tf.tidy(() =>
        visibilityToLogitBias(tf.tensor4d(causalVisibility(length), [1, 1, length, length])),
      );
      const plan = causalBlocks(length);
      expect(plan.length).toBe(blocks + (extra > 0 ? 1 : 0));
      const blocked = outputAndGradients(
        (q, k, v) => causalAttentionOutput(q, k, v, plan),
        operands,
        weight,
      );
      const whole = outputAndGradients(
        (q, k, v) => attentionOutput(q, k, v, bias, false),
        operands,
        weight,
      );
      // the hidden keys added exact zeros; a small block's products may run on another path
      expect(maxAbsDiff(blocked[0]!, whole[0]!)).toBeLessThan(1e-6);
      for (let i = 1; i < 4; i++) expect(maxAbsDiff(blocked[i]!, whole[i]!)).toBeLessThan(1e-5);
      const tensors = tf.memory().numTensors;
      tf.tidy(() =>
        causalAttentionOutput(operands[0]!, operands[1]!, operands[2]!, plan),
      ).dispose();
      expect(tf.memory().numTensors).toBe(tensors);
      tf.dispose([...operands, weight, bias, ...plan.map((block) => block.bias)]);
    });
  }

  it('the parallel forward past one block: logits and weight gradients as with the probabilities captured', () => {
    const config = tinyConfig({ max_position_embeddings: 1024 });
    const model = lively(config, 41);
    const length = CAUSAL_BLOCK + 90;
    const tokens = randomTokens(42, 2 * (length + 1), config.vocab_size);
    const all = tf.tensor2d(tokens, [2, length + 1], 'int32');
    const inputs = tf.slice(all, [0, 0], [2, length]);
    const targets = tf.oneHot(tf.slice(all, [0, 1], [2, length]), config.vocab_size);
    const run = (capture: boolean) => {
      const { value, grads } = tf.variableGrads(() => {
        const { logits } = model.forward(inputs, { capture: { attention: capture } });
        return tf.neg(tf.sum(tf.mul(tf.logSoftmax(logits), targets))) as tf.Scalar;
      });
      const logits = tf.tidy(
        () => model.forward(inputs, { capture: { attention: capture } }).logits,
      );
      const out = {
        loss: value.dataSync()[0]!,
        logits: logits.dataSync(),
        grads: new Map<string, Float32Array>(),
      };
      for (const [name, grad] of Object.entries(grads))
        out.grads.set(name, grad.dataSync() as Float32Array);
      tf.dispose([value, logits, ...Object.values(grads)]);
      return out;
    };
    const blocked = run(false);
    const taped = run(true);
    expect(maxAbsDiff(blocked.logits, taped.logits)).toBeLessThan(1e-5);
    expect(Math.abs(blocked.loss - taped.loss)).toBeLessThan(1e-3 * Math.abs(taped.loss));
    expect(blocked.grads.size).toBe(model.parameters.size);
    for (const [name, grad] of blocked.grads) {
      const expected = taped.grads.get(name)!;
      const scale = Math.max(...expected.map(Math.abs));
      expect(maxAbsDiff(grad, expected), name).toBeLessThan(1e-4 * scale);
    }
    tf.dispose([all, inputs, targets]);
    model.dispose();
  });
});
