import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonPath } from '../../src/harness/gzip-json-path';
import { emptyResults, serializeResults, validateSweepConfig } from '../../src/harness/index';
import { readResultsFile, writeResultsFile } from '../../src/harness/node';

const config = validateSweepConfig({
  tasks: ['toy'],
  policies: ['full', 'h2o'],
  budgets: [0.5],
  seeds: [0],
  examplesPerCell: 2,
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lethe-gzip-json-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('results files ending in .gz', () => {
  it('are written as gzip of the plain file’s text, the same bytes each time, and read back', async () => {
    const results = emptyResults(config);
    const path = join(dir, 'results.json.gz');
    await writeResultsFile(path, results);
    const first = await readFile(path);
    expect([first[0], first[1]]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(first).toString('utf8')).toBe(serializeResults(results));
    await writeResultsFile(path, results);
    expect((await readFile(path)).equals(first)).toBe(true);
    expect(await readResultsFile(path, config)).toEqual(results);
  });

  it('leave a path without .gz as plain text', async () => {
    const path = join(dir, 'results.json');
    await writeResultsFile(path, emptyResults(config));
    expect(await readFile(path, 'utf8')).toBe(serializeResults(emptyResults(config)));
  });

  it('read as absent when missing, so a sweep starts afresh', async () => {
    expect(await readResultsFile(join(dir, 'none.json.gz'), config)).toBeUndefined();
  });
});

describe('readJsonPath', () => {
  it('names the file when a .gz path is not gzip data, is not JSON, or is missing', async () => {
    const plain = join(dir, 'plain.json.gz');
    await writeFile(plain, '{"a": 1}');
    expect((await expectLetheRejection(readJsonPath(plain), 'E_FORMAT', plain)).message).toMatch(
      /not gzip data/,
    );
    const json = join(dir, 'bad.json');
    await writeFile(json, '{"a": ');
    expect((await expectLetheRejection(readJsonPath(json), 'E_FORMAT', json)).message).toMatch(
      /not JSON/,
    );
    const missing = join(dir, 'missing.json.gz');
    await expectLetheRejection(readJsonPath(missing), 'E_ARG', missing);
    expect(await readJsonPath(join(dir, 'results.json'))).toEqual(emptyResults(config));
  });
});
