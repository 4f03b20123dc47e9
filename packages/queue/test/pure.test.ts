import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  decodeQueueValue,
  encodeQueueValue,
  jobIdOf,
  parseRedisUrl,
  queueName,
} from '../src/index';
import { contentHash, dependencyVersions } from '../src/node';

describe('parseRedisUrl', () => {
  it('reads host, port, database and credentials', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6390/2')).toEqual({
      host: '127.0.0.1',
      port: 6390,
      db: 2,
      tls: false,
    });
    expect(parseRedisUrl('redis://localhost')).toEqual({
      host: 'localhost',
      port: 6379,
      db: 0,
      tls: false,
    });
    expect(parseRedisUrl('rediss://u:p%40ss@[::1]:7000')).toEqual({
      host: '::1',
      port: 7000,
      db: 0,
      username: 'u',
      password: 'p@ss',
      tls: true,
    });
  });

  it.each([
    ['', 'must be a redis:// URL'],
    ['127.0.0.1:6379', 'is not a redis:// URL'],
    ['http://localhost:6379', 'must be a redis:// or rediss:// URL, got http:'],
    ['redis://localhost/x', 'has database "x"'],
    ['redis://localhost:0', 'has port 0'],
    ['redis://localhost?db=1', 'takes no query'],
  ])('refuses %j', (url, message) => {
    expect(
      expectLetheError(() => parseRedisUrl(url, '--redis'), 'E_ARG', '--redis').message,
    ).toContain(message);
  });
});

describe('job names', () => {
  it('names a job by run and key, and refuses unsafe parts', () => {
    expect(jobIdOf('ab12', '7')).toBe('run-ab12-item-7');
    expect(queueName('sweep-cell')).toBe('lethe-sweep-cell');
    expectLetheError(() => jobIdOf('a:b', '1'), 'E_ARG', 'run');
    expectLetheError(() => jobIdOf('a', ''), 'E_ARG', 'key');
    expectLetheError(() => queueName('a b'), 'E_ARG', 'kind');
  });
});

describe('contentHash', () => {
  it('hashes a directory by its files and contents, not by where it lies', async () => {
    const root = await mkdtemp(join(tmpdir(), 'lethe-hash-'));
    for (const dir of ['a', 'b']) {
      await mkdir(join(root, dir, 'sub'), { recursive: true });
      await writeFile(join(root, dir, 'config.json'), '{"x":1}');
      await writeFile(join(root, dir, 'sub', 'w.bin'), Buffer.from([1, 2, 3]));
    }
    const a = await contentHash(join(root, 'a'));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await contentHash(join(root, 'b'))).toBe(a);
    await writeFile(join(root, 'b', 'sub', 'w.bin'), Buffer.from([1, 2, 4]));
    expect(await contentHash(join(root, 'b'))).not.toBe(a);
    // A file moved to another name changes the hash though the bytes are the same.
    await mkdir(join(root, 'c', 'sub'), { recursive: true });
    await writeFile(join(root, 'c', 'config.json'), '{"x":1}');
    await writeFile(join(root, 'c', 'sub', 'v.bin'), Buffer.from([1, 2, 3]));
    expect(await contentHash(join(root, 'c'))).not.toBe(a);
    expect(await contentHash(join(root, 'none'))).toBeUndefined();
    expect(await contentHash(join(root, 'a', 'config.json'))).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('dependencyVersions', () => {
  it('reads a package and the dependencies it accepts, as they resolve', () => {
    const versions = dependencyVersions('@lethe/queue', import.meta.url, (name) =>
      name.startsWith('@lethe/'),
    );
    expect(Object.keys(versions)).toEqual(['@lethe/core', '@lethe/queue']);
    expect(versions['@lethe/queue']).toBe('0.1.0');
    expectLetheError(
      () => dependencyVersions('@lethe/none', import.meta.url, () => true),
      'E_ARG',
      'root',
    );
  });
});

describe('encodeQueueValue', () => {
  it('carries typed arrays and the numbers JSON cannot write through JSON unchanged', () => {
    const value = {
      genome: Float64Array.from([0.1, -0, Number.NaN, 1e-310, Math.PI]),
      mean: Float32Array.from([1 / 3, Number.POSITIVE_INFINITY]),
      tokens: Int32Array.from([-5, 2 ** 31 - 1]),
      nested: [{ bytes: Uint8Array.from([0, 255]), x: Number.NEGATIVE_INFINITY }, null, 'text'],
      flag: true,
    };
    const back = decodeQueueValue(
      JSON.parse(JSON.stringify(encodeQueueValue(value))),
    ) as typeof value;
    expect(back).toEqual(value);
    expect(back.genome).toBeInstanceOf(Float64Array);
    expect(Object.is(back.genome[1], -0)).toBe(true);
    expect(Array.from(new Uint32Array(back.mean.buffer))).toEqual(
      Array.from(new Uint32Array(value.mean.buffer)),
    );
  });

  it('names what JSON cannot carry', () => {
    expect(
      expectLetheError(
        () => encodeQueueValue({ a: [1, () => 1] }, 'payload'),
        'E_ARG',
        'payload.a[1]',
      ).message,
    ).toContain('function');
    expect(
      expectLetheError(() => encodeQueueValue({ m: new Map() }, 'payload'), 'E_ARG', 'payload.m')
        .message,
    ).toContain('Map');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expectLetheError(() => encodeQueueValue(cycle, 'payload'), 'E_ARG', 'payload.self');
    expectLetheError(() => encodeQueueValue({ $typed: 'x' }, 'payload'), 'E_ARG', 'payload');
  });
});
