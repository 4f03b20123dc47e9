import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Checkpoint,
  checkpointLayout,
  decodeCheckpoint,
  defaultConfig,
  encodeCheckpoint,
  type Float32Tensor,
  type ModelConfig,
  parseSafetensors,
  serializeSafetensors,
} from '../../src/io';
import { loadCheckpoint, saveCheckpoint } from '../../src/io/node';
import { bytesOf } from './helpers';

const config = defaultConfig({
  model_type: 'qwen2',
  vocab_size: 11,
  hidden_size: 8,
  intermediate_size: 6,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: false,
});

/** Random normal weights for `cfg`, with special values planted in the first tensor. */
function randomCheckpoint(cfg: ModelConfig, seed: number): Checkpoint {
  const rng = new Rng(seed);
  const tensors: Record<string, Float32Tensor> = {};
  for (const { name, shape } of checkpointLayout(cfg)) {
    tensors[name] = { shape, data: rng.normal(shape.reduce((a, b) => a * b, 1)) };
  }
  return { config: cfg, tensors };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lethe-ckpt-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('saveCheckpoint / loadCheckpoint', () => {
  it('round-trips F32 bit-exactly, special values included', async () => {
    const checkpoint = randomCheckpoint(config, 1);
    const special = checkpoint.tensors['model.embed_tokens.weight']!.data;
    special.set([
      -0,
      0,
      1e-45,
      -1.17e-38,
      3.4028234663852886e38,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ]);
    new Uint32Array(special.buffer)[7] = 0x7fc00123; // NaN with a payload
    await saveCheckpoint(join(dir, 'ckpt'), checkpoint);
    const loaded = await loadCheckpoint(join(dir, 'ckpt'));
    expect(loaded.config).toEqual({ ...config, torch_dtype: 'float32' });
    expect(Object.keys(loaded.tensors).sort()).toEqual(Object.keys(checkpoint.tensors).sort());
    for (const [name, tensor] of Object.entries(checkpoint.tensors)) {
      expect(loaded.tensors[name]!.shape).toEqual(tensor.shape);
      expect(bytesOf(loaded.tensors[name]!.data)).toEqual(bytesOf(tensor.data));
    }
    expect((await readdir(join(dir, 'ckpt'))).sort()).toEqual(['config.json', 'model.safetensors']);
  });

  it('writes HF-style files: sorted config.json and {format: "pt"} metadata', async () => {
    await saveCheckpoint(dir, randomCheckpoint(config, 2), { dtype: 'BF16' });
    const json = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    expect(json.torch_dtype).toBe('bfloat16');
    expect(json.architectures).toEqual(['Qwen2ForCausalLM']);
    expect(Object.keys(json)).toEqual(Object.keys(json).sort());
    const file = parseSafetensors(new Uint8Array(await readFile(join(dir, 'model.safetensors'))));
    expect(file.metadata).toEqual({ format: 'pt', lethe_format_version: '1' });
    expect(new Set(Object.values(file.tensors).map((t) => t.dtype))).toEqual(new Set(['BF16']));
  });

  it('stores F16 / BF16 as the rounded values', async () => {
    for (const dtype of ['F16', 'BF16'] as const) {
      const checkpoint = randomCheckpoint(config, 3);
      await saveCheckpoint(dir, checkpoint, { dtype });
      const loaded = await loadCheckpoint(dir);
      for (const [name, tensor] of Object.entries(checkpoint.tensors)) {
        const got = loaded.tensors[name]!.data;
        const relative = dtype === 'F16' ? 2 ** -11 : 2 ** -8;
        tensor.data.forEach((value, i) => {
          expect(Math.abs(got[i]! - value)).toBeLessThanOrEqual(
            Math.abs(value) * relative + 2 ** -24,
          );
        });
      }
    }
  });

  it('validates before writing anything', async () => {
    const checkpoint = randomCheckpoint(config, 4);
    delete checkpoint.tensors['model.norm.weight'];
    checkpoint.tensors['model.layers.0.self_attn.q_proj.bias'] = {
      shape: [8],
      data: new Float32Array(7),
    };
    const error = await expectLetheRejection(saveCheckpoint(dir, checkpoint), 'E_CHECKPOINT');
    expect(error.message).toContain('data has 7 elements, shape needs 8');
    expect(error.message).toContain('model.norm.weight: missing');
    const overflow = randomCheckpoint(config, 5);
    overflow.tensors['model.norm.weight']!.data[0] = 1e6;
    await expectLetheRejection(
      saveCheckpoint(dir, overflow, { dtype: 'F16' }),
      'E_ARG',
      'model.norm.weight',
    );
    await expectLetheRejection(
      saveCheckpoint(dir, randomCheckpoint(config, 6), { dtype: 'I32' as 'F32' }),
      'E_DTYPE',
      'dtype',
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('rejects wrong tensors on load with E_CHECKPOINT', async () => {
    const files = encodeCheckpoint(randomCheckpoint(config, 7));
    const file = parseSafetensors(files.weights);
    const tensors = {
      ...file.tensors,
      'model.extra': { dtype: 'F32', shape: [1], data: new Float32Array(1) },
    } as const;
    await writeFile(join(dir, 'config.json'), files.config);
    await writeFile(join(dir, 'model.safetensors'), serializeSafetensors(tensors));
    await expectLetheRejection(loadCheckpoint(dir), 'E_CHECKPOINT', 'model.extra');
    const missing = { ...file.tensors };
    delete missing['model.norm.weight'];
    await writeFile(join(dir, 'model.safetensors'), serializeSafetensors(missing));
    await expectLetheRejection(loadCheckpoint(dir), 'E_CHECKPOINT', 'model.norm.weight');
    const wrongDtype = {
      ...file.tensors,
      'model.norm.weight': { dtype: 'I32', shape: [8], data: new Int32Array(8) },
    } as const;
    await writeFile(join(dir, 'model.safetensors'), serializeSafetensors(wrongDtype));
    await expectLetheRejection(loadCheckpoint(dir), 'E_CHECKPOINT', 'model.norm.weight');
  });
});

describe('encodeCheckpoint / decodeCheckpoint', () => {
  it('loads an HF-style file without a Lethe version and mixed float dtypes', () => {
    const tied = defaultConfig({ ...config, tie_word_embeddings: true });
    const files = encodeCheckpoint(randomCheckpoint(tied, 8), 'F16');
    const file = parseSafetensors(files.weights);
    const norm = file.tensors['model.norm.weight']!;
    const mixed = {
      ...file.tensors,
      'model.norm.weight': {
        dtype: 'F64',
        shape: norm.shape,
        data: Float64Array.of(1, 2, 3, 4, 5, 6, 7, 8),
      },
    } as const;
    const decoded = decodeCheckpoint({
      config: files.config,
      weights: serializeSafetensors(mixed, { format: 'pt' }),
    });
    expect(decoded.config.tie_word_embeddings).toBe(true);
    expect(decoded.tensors['lm_head.weight']).toBeUndefined();
    expect(Array.from(decoded.tensors['model.norm.weight']!.data)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  it('rejects an unknown format version and a config that is not JSON', () => {
    const files = encodeCheckpoint(randomCheckpoint(config, 9));
    const file = parseSafetensors(files.weights);
    const future = serializeSafetensors(file.tensors, { format: 'pt', lethe_format_version: '2' });
    expectLetheError(
      () => decodeCheckpoint({ config: files.config, weights: future }),
      'E_FORMAT',
      'model.safetensors',
    );
    expectLetheError(
      () => decodeCheckpoint({ config: '{', weights: files.weights }),
      'E_FORMAT',
      'config.json',
    );
    expectLetheError(
      () => decodeCheckpoint({ config: '{"model_type":"llama"}', weights: files.weights }),
      'E_ARG',
      'vocab_size',
    );
  });

  it('is deterministic', () => {
    const a = encodeCheckpoint(randomCheckpoint(config, 10));
    const b = encodeCheckpoint(randomCheckpoint(config, 10));
    expect(a.config).toBe(b.config);
    expect(a.weights).toEqual(b.weights);
  });
});
