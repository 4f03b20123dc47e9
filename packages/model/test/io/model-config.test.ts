import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { configToJson, defaultConfig, type ModelConfig, parseModelConfig } from '../../src/io';

/** Fields of TinyLlama-1.1B's config.json as published on the Hub. */
const TINYLLAMA = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  bos_token_id: 1,
  eos_token_id: 2,
  hidden_act: 'silu',
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: 5632,
  max_position_embeddings: 2048,
  model_type: 'llama',
  num_attention_heads: 32,
  num_hidden_layers: 22,
  num_key_value_heads: 4,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 10000.0,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  transformers_version: '4.35.0',
  use_cache: true,
  vocab_size: 32000,
};

/** Fields of Qwen2-0.5B's config.json (no attention_bias and no head_dim, as published). */
const QWEN2 = {
  architectures: ['Qwen2ForCausalLM'],
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: 'silu',
  hidden_size: 896,
  intermediate_size: 4864,
  max_position_embeddings: 131072,
  max_window_layers: 24,
  model_type: 'qwen2',
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 131072,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  use_sliding_window: false,
  vocab_size: 151936,
};

const small = {
  model_type: 'llama',
  vocab_size: 16,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
};

describe('parseModelConfig', () => {
  it('reads a real Llama config, deriving head_dim and keeping unknown fields', () => {
    const config = parseModelConfig(TINYLLAMA);
    expect(config.head_dim).toBe(64);
    expect(config.num_key_value_heads).toBe(4);
    expect(config.rms_norm_eps).toBe(1e-5);
    expect(config.initializer_range).toBe(0.02);
    expect(config.transformers_version).toBe('4.35.0');
    expect(config.rope_scaling).toBeNull();
  });

  it('reads a real Qwen2 config: attention bias implied, head_dim 64', () => {
    const config = parseModelConfig(QWEN2);
    expect(config.attention_bias).toBe(true);
    expect(config.head_dim).toBe(64);
    expect(config.tie_word_embeddings).toBe(true);
    expect(config.max_window_layers).toBe(24);
  });

  it('fills the family defaults for optional fields', () => {
    const config = parseModelConfig(small);
    expect(config).toEqual({
      ...small,
      num_key_value_heads: 2,
      head_dim: 4,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      max_position_embeddings: 2048,
      tie_word_embeddings: false,
      attention_bias: false,
      hidden_act: 'silu',
    });
    expect(parseModelConfig({ ...small, model_type: 'qwen2' }).max_position_embeddings).toBe(32768);
  });

  it('does not modify or alias its input', () => {
    const input = structuredClone(TINYLLAMA);
    const config = parseModelConfig(input);
    config.architectures!.push('x');
    expect(input).toEqual(TINYLLAMA);
  });

  it('accepts an explicit head_dim and takes rope_theta from default rope_parameters', () => {
    const config = parseModelConfig({
      ...small,
      hidden_size: 6,
      head_dim: 4,
      rope_theta: undefined,
      rope_parameters: { rope_type: 'default', rope_theta: 500000 },
    });
    expect(config.head_dim).toBe(4);
    expect(config.rope_theta).toBe(500000);
  });

  it('names the field of every invalid or unsupported setting', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...small, model_type: 'gpt2' }, 'model_type'],
      [{ ...small, vocab_size: undefined }, 'vocab_size'],
      [{ ...small, hidden_size: 0 }, 'hidden_size'],
      [{ ...small, intermediate_size: 2.5 }, 'intermediate_size'],
      [{ ...small, num_hidden_layers: '2' }, 'num_hidden_layers'],
      [{ ...small, num_key_value_heads: 3 }, 'num_key_value_heads'],
      [{ ...small, hidden_size: 9 }, 'head_dim'],
      [{ ...small, head_dim: 3 }, 'head_dim'],
      [{ ...small, rms_norm_eps: -1 }, 'rms_norm_eps'],
      [{ ...small, rope_theta: Number.NaN }, 'rope_theta'],
      [{ ...small, max_position_embeddings: 0 }, 'max_position_embeddings'],
      [{ ...small, tie_word_embeddings: 'yes' }, 'tie_word_embeddings'],
      [{ ...small, hidden_act: 'gelu' }, 'hidden_act'],
      [{ ...small, attention_bias: true }, 'attention_bias'],
      [{ ...small, model_type: 'qwen2', attention_bias: false }, 'attention_bias'],
      [{ ...small, rope_scaling: { rope_type: 'llama3', factor: 8 } }, 'rope_scaling'],
      [{ ...small, rope_parameters: { rope_type: 'yarn' } }, 'rope_parameters'],
      [{ ...small, mlp_bias: true }, 'mlp_bias'],
      [{ ...small, use_sliding_window: true }, 'use_sliding_window'],
      [{ ...small, torch_dtype: 32 }, 'torch_dtype'],
      [{ ...small, architectures: 'LlamaForCausalLM' }, 'architectures'],
      [{ ...small, bos_token_id: 16 }, 'bos_token_id'],
      [{ ...small, eos_token_id: [2, -1] }, 'eos_token_id'],
    ];
    for (const [json, field] of cases)
      expectLetheError(() => parseModelConfig(json), 'E_ARG', field);
    expectLetheError(() => parseModelConfig(null), 'E_ARG', 'config');
    expectLetheError(() => parseModelConfig([small]), 'E_ARG', 'config');
    expectLetheError(() => parseModelConfig({ ...small, f: () => 1 }), 'E_ARG', 'config');
  });

  it('accepts eos lists and null token ids', () => {
    const config = parseModelConfig({ ...small, eos_token_id: [2, 3], bos_token_id: null });
    expect(config.eos_token_id).toEqual([2, 3]);
    expect(config.bos_token_id).toBeNull();
  });
});

describe('defaultConfig', () => {
  it('equals transformers LlamaConfig() defaults when given nothing', () => {
    const config = defaultConfig();
    expect(config).toMatchObject({
      model_type: 'llama',
      vocab_size: 32000,
      hidden_size: 4096,
      intermediate_size: 11008,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      head_dim: 128,
      max_position_embeddings: 2048,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      tie_word_embeddings: false,
      attention_bias: false,
      bos_token_id: 1,
      eos_token_id: 2,
      architectures: ['LlamaForCausalLM'],
    });
  });

  it('overrides defaults with the given fields (undefined means default)', () => {
    const config = defaultConfig({
      model_type: 'qwen2',
      vocab_size: 64,
      hidden_size: 16,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      intermediate_size: undefined,
    });
    expect(config).toMatchObject({
      model_type: 'qwen2',
      vocab_size: 64,
      head_dim: 4,
      num_key_value_heads: 2,
      intermediate_size: 22016,
      attention_bias: true,
      max_position_embeddings: 32768,
      architectures: ['Qwen2ForCausalLM'],
    });
    expectLetheError(
      () => defaultConfig({ model_type: 'mistral' as 'llama' }),
      'E_ARG',
      'model_type',
    );
  });
});

describe('configToJson', () => {
  it('writes sorted keys, two-space indent and a trailing newline', () => {
    const text = configToJson(parseModelConfig({ ...small, zeta: { b: 1, a: [2] } }));
    expect(text.endsWith('}\n')).toBe(true);
    const keys = [...text.matchAll(/^ {2}"([^"]+)":/gm)].map((m) => m[1]);
    expect(keys).toEqual([...keys].sort());
    expect(keys[0]).toBe('attention_bias');
    expect(text).toContain('"zeta": {\n    "a": [\n      2\n    ],\n    "b": 1\n  }');
  });

  it('round-trips: parse(json(config)) equals config, and json is a fixed point', () => {
    for (const source of [TINYLLAMA, QWEN2, small]) {
      const config: ModelConfig = parseModelConfig(source);
      const text = configToJson(config);
      const again = parseModelConfig(JSON.parse(text));
      expect(again).toEqual(config);
      expect(configToJson(again)).toBe(text);
    }
  });

  it('refuses to write an invalid config', () => {
    const config = parseModelConfig(small);
    expectLetheError(
      () => configToJson({ ...config, num_key_value_heads: 3 }),
      'E_ARG',
      'num_key_value_heads',
    );
  });
});
