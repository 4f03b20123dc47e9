import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../../src/train/base64';
import { readNammCheckpoint, writeNammCheckpoint } from '../../src/train/checkpoint-file';
import { decodeNammCheckpoint, encodeNammCheckpoint } from '../../src/train/namm-checkpoint';
import { NammEvolution } from '../../src/train/namm-evolution';
import { packFloatArrays, unpackFloatArrays } from '../../src/train/packed-floats';
import { fakeOptions, fakeTask } from './fake-evaluation';

const dir = mkdtempSync(join(tmpdir(), 'namm-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A checkpoint after two generations whose member 1 always scores NaN. */
async function checkpoint() {
  const task = fakeTask(
    'a',
    (id) => id + 1,
    (m, id) => (m === 1 ? Number.NaN : m + id / 3),
  );
  const evolution = new NammEvolution(fakeOptions([task]));
  await evolution.train();
  return evolution.checkpoint();
}

describe('packed float arrays', () => {
  it('pack every number array as base64 float64 and unpack it bit for bit', () => {
    const value = {
      mean: [0.1, -2.5e-300, 1e308, 'NaN', 'Infinity', '-Infinity', '-0', 3],
      nested: { rows: [[1, 2], ['NaN']], names: ['tolx'], empty: [], count: 4, flag: true },
    };
    const packed = packFloatArrays(value) as {
      mean: { float64: string };
      nested: { names: string[] };
    };
    expect(typeof packed.mean.float64).toBe('string');
    expect(packed.nested.names).toEqual(['tolx']);
    expect(unpackFloatArrays(JSON.parse(JSON.stringify(packed)), 'state')).toEqual(value);
  });

  it('refuse a packed array that is not base64 of whole float64s', () => {
    expectLetheError(
      () => unpackFloatArrays({ a: { float64: '!!' } }, 'state'),
      'E_FORMAT',
      'state.a',
    );
    expectLetheError(
      () => unpackFloatArrays({ a: [{ float64: 'AAAA' }] }, 'state'),
      'E_FORMAT',
      'state.a[0]',
    );
  });
});

describe('base64', () => {
  it('matches Node’s codec on every length and refuses what is not base64', () => {
    for (let length = 0; length < 40; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + length * 31) & 255);
      const text = toBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(fromBase64(text)).toEqual(bytes);
    }
    for (const bad of ['A', 'AB=C', 'A===', 'AB\u00e9=', 'AB CD===']) {
      expect(() => fromBase64(bad)).toThrow();
    }
  });
});

describe('NAMM checkpoints', () => {
  it('round-trip through JSON text, NaN fitness included', async () => {
    const original = await checkpoint();
    expect(original.history[0]!.fitness[1]).toBeNaN();
    const text = encodeNammCheckpoint(original);
    expect(JSON.parse(text).history[0].fitness[1]).toBe('NaN');
    expect(decodeNammCheckpoint(text)).toEqual(original);
  });

  it('are written atomically and read back; a missing file reads as undefined', async () => {
    const original = await checkpoint();
    const path = join(dir, 'runs', 'namm.json');
    await writeNammCheckpoint(path, original);
    await writeNammCheckpoint(path, original);
    expect(readdirSync(join(dir, 'runs'))).toEqual(['namm.json']);
    expect(await readNammCheckpoint(path)).toEqual(original);
    expect(await readNammCheckpoint(join(dir, 'none.json'))).toBeUndefined();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"format":"other"}');
    await expectLetheRejection(readNammCheckpoint(bad), 'E_FORMAT', bad);
  });
});
