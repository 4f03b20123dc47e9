import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSafetensors, serializeSafetensors } from '../../src/io';
import {
  readFileBytes,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from '../../src/io/node';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lethe-io-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tensors = {
  w: { dtype: 'F32', shape: [2], data: Float32Array.of(1.5, -0) },
  i: { dtype: 'I64', shape: [1], data: BigInt64Array.of(-(2n ** 60n)) },
} as const;

describe('safetensors files on disk', () => {
  it('writes and reads back the same tensors and metadata', async () => {
    const path = join(dir, 'a.safetensors');
    await writeSafetensorsFile(path, tensors, { format: 'pt' });
    expect(new Uint8Array(await readFile(path))).toEqual(
      serializeSafetensors(tensors, { format: 'pt' }),
    );
    const file = await readSafetensorsFile(path);
    expect(file.metadata).toEqual({ format: 'pt' });
    expect(file.tensors.w).toEqual(tensors.w);
    expect(Object.is((file.tensors.w!.data as Float32Array)[1], -0)).toBe(true);
    expect(file.tensors.i).toEqual(tensors.i);
    expect(await readdir(dir)).toEqual(['a.safetensors']);
  });

  it('replaces an existing file and leaves no temporary files', async () => {
    const path = join(dir, 'a.safetensors');
    await writeFile(path, 'old contents');
    await writeSafetensorsFile(path, tensors);
    expect(parseSafetensors(await readFileBytes(path)).tensors.w).toEqual(tensors.w);
    expect(await readdir(dir)).toEqual(['a.safetensors']);
  });

  it('writes nothing when serialisation fails', async () => {
    const path = join(dir, 'bad.safetensors');
    await expectLetheRejection(
      writeSafetensorsFile(path, { t: { dtype: 'F32', shape: [3], data: new Float32Array(2) } }),
      'E_SHAPE',
      't',
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('cleans up the temporary file when the rename fails', async () => {
    // A non-empty directory at the target path makes rename() fail after the data is written.
    const target = join(dir, 'occupied');
    await mkdir(target);
    await writeFile(join(target, 'inside'), 'y');
    await expect(writeFileAtomic(target, new Uint8Array([1, 2, 3]))).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['occupied']);
  });

  it('fails with the file-system error for a missing directory and leaves nothing', async () => {
    await expect(writeFileAtomic(join(dir, 'no', 'such.bin'), 'x')).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(await readdir(dir)).toEqual([]);
    await expect(readSafetensorsFile(join(dir, 'missing.safetensors'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('reports a truncated file on disk as E_FORMAT', async () => {
    const path = join(dir, 't.safetensors');
    const bytes = serializeSafetensors(tensors);
    await writeFile(path, bytes.subarray(0, bytes.length - 1));
    await expectLetheRejection(readSafetensorsFile(path), 'E_FORMAT');
  });
});
