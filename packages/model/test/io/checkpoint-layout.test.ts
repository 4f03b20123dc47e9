import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  checkpointLayout,
  defaultConfig,
  expectedTensorNames,
  expectedTensorShapes,
  type SafetensorsFile,
  type SafetensorsTensor,
  validateCheckpoint,
} from '../../src/io';

const llama = defaultConfig({
  vocab_size: 10,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 6,
});

function fileFor(shapes: Record<string, number[]>, dtype: 'F32' | 'F16' = 'F32'): SafetensorsFile {
  const tensors: Record<string, SafetensorsTensor> = {};
  for (const [name, shape] of Object.entries(shapes)) {
    const count = shape.reduce((a, b) => a * b, 1);
    tensors[name] =
      dtype === 'F32'
        ? { dtype, shape, data: new Float32Array(count) }
        : { dtype, shape, data: new Uint16Array(count) };
  }
  return { tensors, metadata: undefined };
}

describe('checkpoint layout', () => {
  it('lists the HF Llama tensors with [out, in] shapes in model order', () => {
    expect(checkpointLayout(llama)).toEqual([
      { name: 'model.embed_tokens.weight', shape: [10, 8] },
      ...[0, 1].flatMap((i) => [
        { name: `model.layers.${i}.input_layernorm.weight`, shape: [8] },
        { name: `model.layers.${i}.self_attn.q_proj.weight`, shape: [24, 8] },
        { name: `model.layers.${i}.self_attn.k_proj.weight`, shape: [12, 8] },
        { name: `model.layers.${i}.self_attn.v_proj.weight`, shape: [12, 8] },
        { name: `model.layers.${i}.self_attn.o_proj.weight`, shape: [8, 24] },
        { name: `model.layers.${i}.post_attention_layernorm.weight`, shape: [8] },
        { name: `model.layers.${i}.mlp.gate_proj.weight`, shape: [12, 8] },
        { name: `model.layers.${i}.mlp.up_proj.weight`, shape: [12, 8] },
        { name: `model.layers.${i}.mlp.down_proj.weight`, shape: [8, 12] },
      ]),
      { name: 'model.norm.weight', shape: [8] },
      { name: 'lm_head.weight', shape: [10, 8] },
    ]);
  });

  it('adds q/k/v biases for qwen2 and drops lm_head when embeddings are tied', () => {
    const qwen = defaultConfig({
      ...llama,
      model_type: 'qwen2',
      attention_bias: true,
      tie_word_embeddings: true,
    });
    const shapes = expectedTensorShapes(qwen);
    expect(shapes['model.layers.1.self_attn.q_proj.bias']).toEqual([24]);
    expect(shapes['model.layers.1.self_attn.k_proj.bias']).toEqual([12]);
    expect(shapes['model.layers.1.self_attn.v_proj.bias']).toEqual([12]);
    expect(shapes['model.layers.1.self_attn.o_proj.bias']).toBeUndefined();
    expect(shapes['lm_head.weight']).toBeUndefined();
    expect(expectedTensorNames(qwen)).toHaveLength(1 + 2 * 12 + 1);
  });

  it('rejects an invalid config', () => {
    expectLetheError(
      () => checkpointLayout({ ...llama, num_key_value_heads: 3 }),
      'E_ARG',
      'num_key_value_heads',
    );
  });
});

describe('validateCheckpoint', () => {
  it('accepts exactly the expected tensors in F32 or F16', () => {
    validateCheckpoint(fileFor(expectedTensorShapes(llama)), llama);
    validateCheckpoint(fileFor(expectedTensorShapes(llama), 'F16'), llama);
  });

  it('collects missing, extra, mis-shaped and wrong-dtype tensors into one E_CHECKPOINT', () => {
    const shapes = expectedTensorShapes(llama);
    delete shapes['model.norm.weight'];
    shapes['model.layers.0.mlp.down_proj.weight'] = [12, 8];
    shapes['extra.weight'] = [1];
    const file = fileFor(shapes);
    file.tensors['lm_head.weight'] = { dtype: 'I32', shape: [10, 8], data: new Int32Array(80) };
    const error = expectLetheError(
      () => validateCheckpoint(file, llama),
      'E_CHECKPOINT',
      'model.layers.0.mlp.down_proj.weight',
    );
    expect(error.message).toContain('4 problems');
    expect(error.message).toContain(
      'model.layers.0.mlp.down_proj.weight: shape [12,8], expected [8,12]',
    );
    expect(error.message).toContain('model.norm.weight: missing');
    expect(error.message).toContain('lm_head.weight: dtype I32');
    expect(error.message).toContain('extra.weight: unexpected');
  });

  it('names a single missing tensor as the argument', () => {
    const shapes = expectedTensorShapes(llama);
    delete shapes['model.embed_tokens.weight'];
    const error = expectLetheError(
      () => validateCheckpoint(fileFor(shapes), llama),
      'E_CHECKPOINT',
      'model.embed_tokens.weight',
    );
    expect(error.message).toContain('1 problem)');
  });

  it('treats lm_head as extra when embeddings are tied', () => {
    const tied = defaultConfig({ ...llama, tie_word_embeddings: true });
    expectLetheError(
      () => validateCheckpoint(fileFor(expectedTensorShapes(llama)), tied),
      'E_CHECKPOINT',
      'lm_head.weight',
    );
  });
});
