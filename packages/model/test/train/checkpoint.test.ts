import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeSafetensors } from '../../src/io/index';
import {
  decodeSftCheckpoint,
  decodeTrainingCheckpoint,
  encodeSftCheckpoint,
  encodeTrainingCheckpoint,
  SFT_CHECKPOINT_FORMAT,
  type SftCheckpoint,
} from '../../src/train';
import { directoryCheckpointStore, SFT_CHECKPOINT_FILE } from '../../src/train/node';
import { bits } from './helpers';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'lethe-sft-ckpt-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function sample(): SftCheckpoint {
  const rng = new Rng(3);
  return {
    step: 17,
    rng: { key: [0xffffffff, 12], counter: 5 },
    parameters: new Map([
      ['a.weight', { shape: [2, 3], data: rng.normal(6) }],
      ['b.bias', { shape: [4], data: Float32Array.from([-0, Number.MIN_VALUE, 1e-45, 3.5]) }],
    ]),
    optimizer: {
      step: 17,
      m: new Map([
        ['a.weight', rng.normal(6)],
        ['b.bias', rng.normal(4)],
      ]),
      v: new Map([
        ['a.weight', rng.uniform(6)],
        ['b.bias', rng.uniform(4)],
      ]),
    },
  };
}

function expectSame(read: SftCheckpoint, written: SftCheckpoint): void {
  expect(read.step).toBe(written.step);
  expect(read.rng).toEqual(written.rng);
  expect(read.optimizer.step).toBe(written.optimizer.step);
  expect([...read.parameters.keys()].sort()).toEqual([...written.parameters.keys()].sort());
  for (const [name, p] of written.parameters) {
    expect(read.parameters.get(name)!.shape).toEqual(p.shape);
    expect(bits(read.parameters.get(name)!.data)).toEqual(bits(p.data));
    expect(bits(read.optimizer.m.get(name)!)).toEqual(bits(written.optimizer.m.get(name)!));
    expect(bits(read.optimizer.v.get(name)!)).toEqual(bits(written.optimizer.v.get(name)!));
  }
}

describe('SFT checkpoint encoding', () => {
  it('round-trips every bit, deterministically', () => {
    const written = sample();
    const bytes = encodeSftCheckpoint(written);
    expect(encodeSftCheckpoint(sample())).toEqual(bytes);
    expectSame(decodeSftCheckpoint(bytes), written);
  });

  it('rejects foreign or malformed bytes with E_FORMAT naming the field', () => {
    const good = {
      format: SFT_CHECKPOINT_FORMAT,
      version: '1',
      step: '1',
      optimizerStep: '1',
      rng: JSON.stringify({ key: [1, 2], counter: 0 }),
    };
    const f32 = { dtype: 'F32' as const, shape: [1], data: new Float32Array(1) };
    const full = { 'param/w': f32, 'adamw.m/w': f32, 'adamw.v/w': f32 };
    const cases: [Record<string, typeof f32>, Record<string, string> | undefined, string][] = [
      [full, undefined, 'format'],
      [full, { ...good, format: 'something-else' }, 'format'],
      [full, { ...good, version: '2' }, 'version'],
      [full, { ...good, step: '-1' }, 'step'],
      [full, { ...good, step: '' }, 'step'],
      [full, { ...good, optimizerStep: '1.5' }, 'optimizerStep'],
      [full, { ...good, rng: '{"key":[1],"counter":0}' }, 'rng'],
      [full, { ...good, rng: '{"key":[1,4294967296],"counter":0}' }, 'rng'],
      [full, { ...good, rng: 'not json' }, 'rng'],
      [{ 'param/w': f32, 'adamw.m/w': f32 }, good, 'w'],
      [{ ...full, 'other/x': f32 }, good, 'other/x'],
    ];
    for (const [tensors, metadata, field] of cases) {
      expectLetheError(
        () => decodeSftCheckpoint(serializeSafetensors(tensors, metadata)),
        'E_FORMAT',
        field,
      );
    }
    const i32 = { dtype: 'I32' as const, shape: [1], data: new Int32Array(1) };
    expectLetheError(
      () => decodeSftCheckpoint(serializeSafetensors({ ...full, 'param/w': i32 }, good)),
      'E_FORMAT',
      'param/w',
    );
    expectLetheError(
      () => decodeSftCheckpoint(encodeSftCheckpoint(sample()).subarray(0, 100)),
      'E_FORMAT',
    );
  });
});

describe('training checkpoint encoding', () => {
  const format = { format: 'lethe-test-checkpoint', version: 3 };

  it("round-trips a trainer's own metadata next to parameters and moments", () => {
    const { rng, ...rest } = sample();
    const written = { ...rest, metadata: { history: '[1,2]', config: '{"a":1}' } };
    const read = decodeTrainingCheckpoint(encodeTrainingCheckpoint(written, format), format);
    expect(read.metadata).toEqual(written.metadata);
    expectSame({ ...read, rng }, { ...written, rng });
  });

  it('refuses reserved metadata keys and bytes of another format or version', () => {
    const { rng: _, ...rest } = sample();
    expectLetheError(
      () => encodeTrainingCheckpoint({ ...rest, metadata: { step: '3' } }, format),
      'E_ARG',
      'metadata.step',
    );
    const bytes = encodeTrainingCheckpoint({ ...rest, metadata: {} }, format);
    expectLetheError(() => decodeSftCheckpoint(bytes), 'E_FORMAT', 'format');
    expectLetheError(
      () => decodeTrainingCheckpoint(bytes, { ...format, version: 4 }),
      'E_FORMAT',
      'version',
    );
  });
});

describe('directoryCheckpointStore', () => {
  it('reads nothing before the first write, then the latest bytes; leaves no temporary file', async () => {
    const dir = join(root, 'nested', 'run');
    const store = directoryCheckpointStore(dir);
    expect(store.path).toBe(join(dir, SFT_CHECKPOINT_FILE));
    expect(await store.read()).toBeUndefined();
    await store.write(Uint8Array.of(1, 2, 3));
    await store.write(encodeSftCheckpoint(sample()));
    expectSame(decodeSftCheckpoint((await store.read())!), sample());
    expect(await readdir(dir)).toEqual([SFT_CHECKPOINT_FILE]);
  });

  it("keeps another trainer's file under the name it gives", async () => {
    const dir = join(root, 'other');
    const store = directoryCheckpointStore(dir, 'ngc-checkpoint.safetensors');
    await store.write(Uint8Array.of(4, 5));
    expect(await readdir(dir)).toEqual(['ngc-checkpoint.safetensors']);
    expect(await store.read()).toEqual(Uint8Array.of(4, 5));
  });
});
