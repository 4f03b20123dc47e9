import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readWeightFiles } from '../../src/directory/weight-files';
import {
  type Checkpoint,
  checkpointLayout,
  decodeCheckpoint,
  decodeShardedCheckpoint,
  defaultConfig,
  encodeCheckpoint,
  type Float32Tensor,
  type FloatStorageDtype,
  parseSafetensors,
  parseShardIndex,
  type SafetensorsTensor,
  type ShardedCheckpointFiles,
  serializeSafetensors,
} from '../../src/io';
import { loadCheckpoint, nodeModelFiles } from '../../src/io/node';
import { HF_FIXTURES } from '../support/hf-fixtures';
import { bytesOf } from './helpers';

const config = defaultConfig({
  model_type: 'llama',
  vocab_size: 13,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: false,
});

function randomCheckpoint(seed: number): Checkpoint {
  const rng = new Rng(seed);
  const tensors: Record<string, Float32Tensor> = {};
  for (const { name, shape } of checkpointLayout(config)) {
    tensors[name] = { shape, data: rng.normal(shape.reduce((a, b) => a * b, 1)) };
  }
  return { config, tensors };
}

const shardName = (i: number, n: number) =>
  `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;

/**
 * The same checkpoint as one file and as `n` shards (consecutive tensors of the file's own
 * order), both stored as `dtype`.
 */
function bothLayouts(
  checkpoint: Checkpoint,
  dtype: FloatStorageDtype,
  n: number,
): { config: string; weights: Uint8Array; sharded: ShardedCheckpointFiles } {
  const { config: configText, weights } = encodeCheckpoint(checkpoint, dtype);
  const entries = Object.entries(parseSafetensors(weights).tensors);
  const per = Math.ceil(entries.length / n);
  const shards: Record<string, Uint8Array> = {};
  const weightMap: Record<string, string> = {};
  for (let s = 0; s < n; s++) {
    const part = entries.slice(s * per, (s + 1) * per);
    for (const [name] of part) weightMap[name] = shardName(s, n);
    shards[shardName(s, n)] = serializeSafetensors(Object.fromEntries(part), { format: 'pt' });
  }
  const index = JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap });
  return { config: configText, weights, sharded: { config: configText, index, shards } };
}

function expectSameCheckpoint(actual: Checkpoint, expected: Checkpoint): void {
  expect(actual.config).toEqual(expected.config);
  expect(Object.keys(actual.tensors).sort()).toEqual(Object.keys(expected.tensors).sort());
  for (const [name, tensor] of Object.entries(expected.tensors)) {
    expect(actual.tensors[name]!.shape).toEqual(tensor.shape);
    expect(bytesOf(actual.tensors[name]!.data)).toEqual(bytesOf(tensor.data));
  }
}

/** `files` with the index replaced by `weightMap` (and `metadata`). */
function withIndex(files: ShardedCheckpointFiles, index: unknown): ShardedCheckpointFiles {
  return { ...files, index: JSON.stringify(index) };
}

function indexOf(files: ShardedCheckpointFiles): { weight_map: Record<string, string> } {
  return JSON.parse(files.index);
}

describe('decodeShardedCheckpoint', () => {
  it.each(['F32', 'F16', 'BF16'] as const)(
    'gives bit for bit what one %s file gives, for 2 and 3 shards',
    (dtype) => {
      for (const n of [2, 3]) {
        const files = bothLayouts(randomCheckpoint(1), dtype, n);
        const single = decodeCheckpoint({ config: files.config, weights: files.weights });
        expect(Object.keys(files.sharded.shards)).toHaveLength(n);
        expectSameCheckpoint(decodeShardedCheckpoint(files.sharded), single);
      }
    },
  );

  it('decodes the BF16 fixture tiny-llama exactly as its shards merged into one file', () => {
    const dir = join(HF_FIXTURES, 'tiny-llama');
    const index = readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8');
    const shards: Record<string, Uint8Array> = {};
    const merged: Record<string, SafetensorsTensor> = {};
    for (const shard of parseShardIndex(index).shards) {
      shards[shard] = new Uint8Array(readFileSync(join(dir, shard)));
      Object.assign(merged, parseSafetensors(shards[shard]!).tensors);
    }
    expect(Object.keys(shards)).toHaveLength(2);
    expect(new Set(Object.values(merged).map((t) => t.dtype))).toEqual(new Set(['BF16']));
    const configText = readFileSync(join(dir, 'config.json'), 'utf8');
    const sharded = decodeShardedCheckpoint({ config: configText, index, shards });
    const single = decodeCheckpoint({ config: configText, weights: serializeSafetensors(merged) });
    expectSameCheckpoint(sharded, single);
  });

  it('ignores files the index does not name', () => {
    const { sharded } = bothLayouts(randomCheckpoint(2), 'F32', 2);
    const extra = { ...sharded.shards, 'other.safetensors': new Uint8Array(3) };
    expect(() => decodeShardedCheckpoint({ ...sharded, shards: extra })).not.toThrow();
  });

  it('refuses an index that is not JSON or has no usable weight_map (E_FORMAT naming the index)', () => {
    const { sharded } = bothLayouts(randomCheckpoint(3), 'F32', 2);
    const cases: [string, RegExp][] = [
      ['{ nope', /is not valid JSON/],
      ['[]', /must be a JSON object with a weight_map/],
      ['{"metadata": {}}', /weight_map must be an object/],
      ['{"weight_map": []}', /weight_map must be an object/],
      ['{"weight_map": {}}', /weight_map is empty/],
      ['{"metadata": 3, "weight_map": {"a": "b"}}', /metadata must be an object/],
      ['{"weight_map": {"a": 7}}', /weight_map\["a"\] must be a shard file name, got 7/],
    ];
    for (const [index, message] of cases) {
      const error = expectLetheError(
        () => decodeShardedCheckpoint({ ...sharded, index }, { indexName: 'dir/index.json' }),
        'E_FORMAT',
        'dir/index.json',
      );
      expect(error.message).toMatch(message);
    }
  });

  it('refuses shard names that leave the directory', () => {
    const { sharded } = bothLayouts(randomCheckpoint(4), 'F32', 2);
    const map = indexOf(sharded).weight_map;
    const escapes: [string, RegExp][] = [
      ['../model-00001-of-00002.safetensors', /has a "\.\." path segment/],
      ['shards/../../x.safetensors', /has a "\.\." path segment/],
      ['/etc/passwd', /is an absolute path/],
      ['C:/weights.safetensors', /is an absolute path/],
      ['..\\x.safetensors', /holds a backslash/],
      ['./x.safetensors', /has a "\." path segment/],
      ['a//b.safetensors', /has an empty path segment/],
      ['a\u0000b', /holds a NUL character/],
    ];
    for (const [file, message] of escapes) {
      const first = Object.keys(map)[0]!;
      const error = expectLetheError(
        () =>
          decodeShardedCheckpoint(withIndex(sharded, { weight_map: { ...map, [first]: file } })),
        'E_FORMAT',
        'model.safetensors.index.json',
      );
      expect(error.message).toMatch(message);
      expect(error.message).toContain('must lie inside the checkpoint directory');
    }
    expect(parseShardIndex('{"weight_map": {"a": "sub/dir/x.safetensors"}}').shards).toEqual([
      'sub/dir/x.safetensors',
    ]);
  });

  it('names a shard the index names that is missing (E_CHECKPOINT)', () => {
    const { sharded } = bothLayouts(randomCheckpoint(5), 'F32', 2);
    const shards = { ...sharded.shards };
    delete shards[shardName(1, 2)];
    const error = expectLetheError(
      () =>
        decodeShardedCheckpoint(
          { ...sharded, shards },
          { indexName: 'm/index.json', shardName: (file) => `m/${file}` },
        ),
      'E_CHECKPOINT',
      `m/${shardName(1, 2)}`,
    );
    expect(error.message).toMatch(/is named by m\/index\.json but missing/);
  });

  it('refuses shards and an index that disagree (E_CHECKPOINT naming the tensor)', () => {
    const { sharded } = bothLayouts(randomCheckpoint(6), 'F32', 2);
    const map = indexOf(sharded).weight_map;
    const [a, b] = [shardName(0, 2), shardName(1, 2)];
    const inA = Object.keys(map).find((name) => map[name] === a)!;
    const tensorsOf = (shard: string) => parseSafetensors(sharded.shards[shard]!).tensors;

    // The index maps a tensor to a shard that lacks it.
    const moved = expectLetheError(
      () => decodeShardedCheckpoint(withIndex(sharded, { weight_map: { ...map, ghost: b } })),
      'E_CHECKPOINT',
      'ghost',
    );
    expect(moved.message).toMatch(`maps it to ${b}, which does not hold it`);

    // A tensor stored in two shards.
    const twice = serializeSafetensors({ ...tensorsOf(b), [inA]: tensorsOf(a)[inA]! });
    const duplicated = expectLetheError(
      () => decodeShardedCheckpoint({ ...sharded, shards: { ...sharded.shards, [b]: twice } }),
      'E_CHECKPOINT',
      inA,
    );
    expect(duplicated.message).toMatch(`is stored in two shards: ${a} and ${b}`);

    // A tensor stored in a shard but not in the index.
    const unlisted = { ...map };
    delete unlisted[inA];
    const absent = expectLetheError(
      () => decodeShardedCheckpoint(withIndex(sharded, { weight_map: unlisted })),
      'E_CHECKPOINT',
      inA,
    );
    expect(absent.message).toMatch(`is stored in ${a} but model.safetensors.index.json does not`);

    // A tensor stored in one shard but mapped to the other.
    const elsewhere = expectLetheError(
      () => decodeShardedCheckpoint(withIndex(sharded, { weight_map: { ...map, [inA]: b } })),
      'E_CHECKPOINT',
      inA,
    );
    expect(elsewhere.message).toMatch(`is stored in ${a} but model.safetensors.index.json maps it`);

    // Index and shards agree, but a tensor of the layout is in neither.
    const withoutNorm = { ...map };
    const normShard = withoutNorm['model.norm.weight']!;
    delete withoutNorm['model.norm.weight'];
    const rest = { ...tensorsOf(normShard) };
    delete rest['model.norm.weight'];
    const missing = expectLetheError(
      () =>
        decodeShardedCheckpoint({
          ...withIndex(sharded, { weight_map: withoutNorm }),
          shards: { ...sharded.shards, [normShard]: serializeSafetensors(rest) },
        }),
      'E_CHECKPOINT',
      'model.norm.weight',
    );
    expect(missing.message).toMatch('model.norm.weight: missing');
  });

  it('names a malformed shard (E_FORMAT)', () => {
    const { sharded } = bothLayouts(randomCheckpoint(7), 'F32', 2);
    const b = shardName(1, 2);
    const truncated = sharded.shards[b]!.subarray(0, sharded.shards[b]!.length - 4);
    const error = expectLetheError(
      () => decodeShardedCheckpoint({ ...sharded, shards: { ...sharded.shards, [b]: truncated } }),
      'E_FORMAT',
      b,
    );
    expect(error.message).toMatch(/truncated|past the end|beyond/);
  });

  it('refuses arguments of the wrong kind (E_ARG)', () => {
    const { sharded } = bothLayouts(randomCheckpoint(8), 'F32', 2);
    expectLetheError(() => decodeShardedCheckpoint(null as never), 'E_ARG', 'files');
    expectLetheError(
      () => decodeShardedCheckpoint({ ...sharded, config: 3 as never }),
      'E_ARG',
      'files.config',
    );
    expectLetheError(
      () => decodeShardedCheckpoint({ ...sharded, index: {} as never }),
      'E_ARG',
      'files.index',
    );
    expectLetheError(
      () => decodeShardedCheckpoint({ ...sharded, shards: null as never }),
      'E_ARG',
      'files.shards',
    );
    expectLetheError(
      () => decodeShardedCheckpoint(sharded, { shardName: 'x' as never }),
      'E_ARG',
      'shardName',
    );
  });
});

describe('loadCheckpoint / readWeightFiles on a sharded directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lethe-shards-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeSharded(files: ShardedCheckpointFiles): Promise<void> {
    await writeFile(join(dir, 'config.json'), files.config);
    await writeFile(join(dir, 'model.safetensors.index.json'), files.index);
    for (const [name, bytes] of Object.entries(files.shards)) {
      await writeFile(join(dir, name), bytes);
    }
  }

  it('loads the shards as the single file loads', async () => {
    const files = bothLayouts(randomCheckpoint(9), 'BF16', 2);
    await writeSharded(files.sharded);
    const weights = await readWeightFiles(nodeModelFiles(dir));
    expect(weights.layout).toBe('sharded');
    expect(weights.path).toBe(join(dir, 'model.safetensors.index.json'));
    expectSameCheckpoint(
      await loadCheckpoint(dir),
      decodeCheckpoint({ config: files.config, weights: files.weights }),
    );
  });

  it('loads the fixture tiny-llama', async () => {
    const loaded = await loadCheckpoint(join(HF_FIXTURES, 'tiny-llama'));
    expect(loaded.config.torch_dtype).toBe('bfloat16');
    expect(Object.keys(loaded.tensors)).toHaveLength(checkpointLayout(loaded.config).length);
  });

  it('prefers model.safetensors when both layouts are there, as transformers does', async () => {
    const files = bothLayouts(randomCheckpoint(10), 'F32', 2);
    await writeSharded(bothLayouts(randomCheckpoint(11), 'F32', 2).sharded);
    await writeFile(join(dir, 'model.safetensors'), files.weights);
    expect((await readWeightFiles(nodeModelFiles(dir))).layout).toBe('single');
    expectSameCheckpoint(
      await loadCheckpoint(dir),
      decodeCheckpoint({ config: files.config, weights: files.weights }),
    );
  });

  it('names a missing shard file by its path', async () => {
    const { sharded } = bothLayouts(randomCheckpoint(12), 'F32', 2);
    await writeSharded(sharded);
    await rm(join(dir, shardName(0, 2)));
    const error = await expectLetheRejection(
      loadCheckpoint(dir),
      'E_CHECKPOINT',
      join(dir, shardName(0, 2)),
    );
    expect(error.message).toContain(
      `is named by ${join(dir, 'model.safetensors.index.json')} but missing`,
    );
  });

  it('refuses an index whose shards lie outside the directory', async () => {
    const { sharded } = bothLayouts(randomCheckpoint(13), 'F32', 2);
    const inner = join(dir, 'inner');
    await mkdir(inner);
    await writeFile(join(dir, shardName(0, 2)), sharded.shards[shardName(0, 2)]!);
    const map = indexOf(sharded).weight_map;
    const escaping = Object.fromEntries(
      Object.entries(map).map(([tensor, shard]) => [tensor, `../${shard}`]),
    );
    await writeFile(join(inner, 'config.json'), sharded.config);
    await writeFile(
      join(inner, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: escaping }),
    );
    await expectLetheRejection(
      loadCheckpoint(inner),
      'E_FORMAT',
      join(inner, 'model.safetensors.index.json'),
    );
    await expectLetheRejection(
      readWeightFiles(nodeModelFiles(inner)),
      'E_FORMAT',
      join(inner, 'model.safetensors.index.json'),
    );
  });

  it('without either layout, names model.safetensors as missing; a missing config.json too', async () => {
    await writeFile(join(dir, 'config.json'), encodeCheckpoint(randomCheckpoint(14)).config);
    const error = await expectLetheRejection(
      loadCheckpoint(dir),
      'E_CHECKPOINT',
      join(dir, 'model.safetensors'),
    );
    expect(error.message).toContain('is missing, and so is model.safetensors.index.json');
    expect(await readdir(dir)).toEqual(['config.json']);
    await rm(join(dir, 'config.json'));
    await expectLetheRejection(loadCheckpoint(dir), 'E_CHECKPOINT', join(dir, 'config.json'));
    expectLetheError(() => nodeModelFiles(3 as never), 'E_ARG', 'dir');
  });
});
