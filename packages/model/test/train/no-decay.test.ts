import { describe, expect, it } from 'vitest';
import { isNormOrBias } from '../../src/train';

describe('isNormOrBias', () => {
  it('matches norms and biases of Hugging Face names only', () => {
    for (const name of [
      'model.norm.weight',
      'model.layers.0.input_layernorm.weight',
      'model.layers.11.post_attention_layernorm.weight',
      'model.layers.0.self_attn.k_proj.bias',
      'bias',
    ]) {
      expect(isNormOrBias(name)).toBe(true);
    }
    for (const name of [
      'model.embed_tokens.weight',
      'lm_head.weight',
      'model.layers.0.mlp.down_proj.weight',
      'model.layers.0.self_attn.o_proj.weight',
      'gate.biasless.weight',
    ]) {
      expect(isNormOrBias(name)).toBe(false);
    }
  });
});
