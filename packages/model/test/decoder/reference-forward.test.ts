import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { float64Logits } from '../support/float64-decoder';
import { lively, maxAbsDiff, randomTokens, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('parallel forward vs an independent Float64 reference', () => {
  const cases = [
    { name: 'qwen2 (bias), untied, GQA 4/2', config: tinyConfig({ model_type: 'qwen2' }) },
    {
      name: 'llama, tied, GQA 4/1, head_dim 6, θ=500',
      config: tinyConfig({
        tie_word_embeddings: true,
        num_key_value_heads: 1,
        head_dim: 6,
        rope_theta: 500,
      }),
    },
    // long enough for attention to take the split (per-head 2-D matmul) path on wasm
    { name: 'qwen2, long sequence', config: tinyConfig({ model_type: 'qwen2' }), length: 300 },
  ];
  for (const { name, config, length = 9 } of cases) {
    it(`${name}, T=${length}: logits within 1e-4 (default and explicit positions)`, () => {
      const model = lively(config, 7);
      const weights = model.toTensors();
      const tokens = randomTokens(13, length, config.vocab_size);
      const ids = tf.tensor2d(tokens, [1, tokens.length], 'int32');
      const shifted = Array.from(tokens, (_, t) => 5 + 3 * t);
      const positions = tf.tensor2d(shifted, [1, tokens.length], 'int32');
      for (const [pos, options] of [
        [Array.from(tokens, (_, t) => t), {}],
        [shifted, { positions }],
      ] as const) {
        const { logits } = model.forward(ids, options);
        const ours = logits.dataSync();
        logits.dispose();
        const expected = float64Logits(config, weights, tokens, [...pos]);
        const flat = Float64Array.from(expected.flatMap((row) => [...row]));
        expect(maxAbsDiff(ours, flat)).toBeLessThan(1e-4);
        // the reference is not trivially flat: logits spread over more than 1 nat
        expect(Math.max(...flat) - Math.min(...flat)).toBeGreaterThan(1);
      }
      ids.dispose();
      positions.dispose();
      model.dispose();
    });
  }
});
