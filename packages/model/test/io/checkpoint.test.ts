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
import { loadCheckpoint, readSafetensorsFile, saveCheckpoint } from '../../src/io/node';
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
    special.set([-0, 0, 1e-45, -1.17e-38, 3.4028234663852886e38, -3.4028234663852886e38]);
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

/** The safetensors bytes of `checkpoint` with `edit` applied to its float32 tensors (F32 stored). */
function editedWeights(
  checkpoint: Checkpoint,
  edit: (tensors: Record<string, Float32Tensor>) => void,
) {
  const tensors = structuredClone(checkpoint.tensors);
  edit(tensors);
  return serializeSafetensors(
    Object.fromEntries(
      Object.entries(tensors).map(([name, t]) => [
        name,
        { dtype: 'F32', shape: t.shape, data: t.data },
      ]),
    ) as Record<string, { dtype: 'F32'; shape: readonly number[]; data: Float32Array }>,
  );
}

describe('non-finite weights (regression: they loaded and failed later)', () => {
  it('decodeCheckpoint refuses NaN / ±Infinity, naming every tensor and the file', () => {
    const checkpoint = randomCheckpoint(config, 11);
    const { config: text } = encodeCheckpoint(checkpoint);
    const weights = editedWeights(checkpoint, (t) => {
      t['model.layers.1.mlp.up_proj.weight']!.data.set([Number.NaN, 1, Number.NaN], 4);
      t['model.norm.weight']!.data[2] = Number.NEGATIVE_INFINITY;
    });
    const error = expectLetheError(
      () => decodeCheckpoint({ config: text, weights }),
      'E_CHECKPOINT',
      'model.layers.1.mlp.up_proj.weight',
    );
    expect(error.message).toContain('model.safetensors');
    expect(error.message).toContain(
      'model.layers.1.mlp.up_proj.weight: 2 non-finite elements, the first NaN at index 4',
    );
    expect(error.message).toContain(
      'model.norm.weight: 1 non-finite element, the first -Infinity at index 2',
    );
  });

  it('loadCheckpoint names the file by its path; F16 infinities count too', async () => {
    const checkpoint = randomCheckpoint(config, 12);
    const files = encodeCheckpoint(checkpoint, 'F16');
    const file = parseSafetensors(files.weights, { copy: true });
    const head = file.tensors['lm_head.weight']!;
    (head.data as Uint16Array)[5] = 0x7c00; // F16 +Infinity
    await writeFile(join(dir, 'config.json'), files.config);
    await writeFile(join(dir, 'model.safetensors'), serializeSafetensors(file.tensors));
    const error = await expectLetheRejection(loadCheckpoint(dir), 'E_CHECKPOINT', 'lm_head.weight');
    expect(error.message).toContain(join(dir, 'model.safetensors'));
    expect(error.message).toContain('the first Infinity at index 5');
  });

  it('encodeCheckpoint / saveCheckpoint refuse to write what would not load', async () => {
    const checkpoint = randomCheckpoint(config, 13);
    checkpoint.tensors['model.embed_tokens.weight']!.data[0] = Number.POSITIVE_INFINITY;
    expectLetheError(
      () => encodeCheckpoint(checkpoint),
      'E_CHECKPOINT',
      'model.embed_tokens.weight',
    );
    await expectLetheRejection(
      saveCheckpoint(join(dir, 'bad'), checkpoint),
      'E_CHECKPOINT',
      'model.embed_tokens.weight',
    );
    await expect(readdir(dir)).resolves.toEqual([]);
  });
});

describe('a tied checkpoint that also stores lm_head.weight (regression: refused as unexpected)', () => {
  const tied = defaultConfig({ ...config, tie_word_embeddings: true });

  it('loads when lm_head.weight equals the embedding bit for bit, and drops it', () => {
    for (const dtype of ['F32', 'BF16'] as const) {
      const files = encodeCheckpoint(randomCheckpoint(tied, 14), dtype);
      const file = parseSafetensors(files.weights);
      const withHead = {
        ...file.tensors,
        'lm_head.weight': file.tensors['model.embed_tokens.weight']!,
      };
      const decoded = decodeCheckpoint({
        config: files.config,
        weights: serializeSafetensors(withHead),
      });
      expect(decoded.tensors['lm_head.weight']).toBeUndefined();
      expect(Object.keys(decoded.tensors).sort()).toEqual(
        checkpointLayout(tied)
          .map((s) => s.name)
          .sort(),
      );
    }
  });

  it('refuses one that differs (even by one bit), saying which to use', () => {
    const files = encodeCheckpoint(randomCheckpoint(tied, 15));
    const file = parseSafetensors(files.weights, { copy: true });
    const embedding = file.tensors['model.embed_tokens.weight']!;
    const head = new Float32Array(embedding.data as Float32Array);
    new Uint32Array(head.buffer)[17]! ^= 1;
    const weights = serializeSafetensors({
      ...file.tensors,
      'lm_head.weight': { dtype: 'F32', shape: embedding.shape, data: head },
    });
    const error = expectLetheError(
      () => decodeCheckpoint({ config: files.config, weights }),
      'E_CHECKPOINT',
      'lm_head.weight',
    );
    expect(error.message).toContain('element 17');
    expect(error.message).toContain('set tie_word_embeddings to false');
    expect(error.message).toContain('remove lm_head.weight');
    const reshaped = serializeSafetensors({
      ...file.tensors,
      'lm_head.weight': { dtype: 'F32', shape: [1, head.length], data: head },
    });
    expectLetheError(
      () => decodeCheckpoint({ config: files.config, weights: reshaped }),
      'E_CHECKPOINT',
      'lm_head.weight',
    );
  });
});

describe('loading and saving refuse arguments of the wrong kind with coded errors', () => {
  it('names the argument instead of throwing a TypeError', async () => {
    const files = encodeCheckpoint(randomCheckpoint(config, 16));
    expectLetheError(() => decodeCheckpoint(null as never), 'E_ARG', 'files');
    expectLetheError(() => decodeCheckpoint(undefined as never), 'E_ARG', 'files');
    expectLetheError(
      () => decodeCheckpoint({ config: null, weights: files.weights } as never),
      'E_ARG',
      'files.config',
    );
    expectLetheError(() => decodeCheckpoint(files, null as never), 'E_ARG', 'options');
    expectLetheError(() => parseSafetensors(files.weights, null as never), 'E_ARG', 'options');
    expectLetheError(
      () =>
        encodeCheckpoint({
          config,
          tensors: { ...randomCheckpoint(config, 16).tensors, 'model.norm.weight': null as never },
        }),
      'E_CHECKPOINT',
      'model.norm.weight',
    );
    await expectLetheRejection(loadCheckpoint(undefined as never), 'E_ARG', 'dir');
    await expectLetheRejection(loadCheckpoint(null as never), 'E_ARG', 'dir');
    await expectLetheRejection(
      saveCheckpoint(dir, randomCheckpoint(config, 16), null as never),
      'E_ARG',
      'options',
    );
    await expectLetheRejection(
      saveCheckpoint(null as never, randomCheckpoint(config, 16)),
      'E_ARG',
      'dir',
    );
    await expectLetheRejection(readSafetensorsFile(undefined as never), 'E_ARG', 'path');
    await expectLetheRejection(
      readSafetensorsFile(join(dir, 'x.safetensors'), null as never),
      'E_ARG',
      'options',
    );
    await expect(readdir(dir)).resolves.toEqual([]);
  });
});
