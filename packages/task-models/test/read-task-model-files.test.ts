import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ModelFiles, modelFilesFromFileList, modelFilesFromUrl } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTaskModelFiles, TASK_MODEL_FILE } from '../src/index';
import { loadTaskModel } from '../src/load-task-model';

const RETRIEVAL = join(__dirname, '../../../models/retrieval');
/** Where the tests pretend the retrieval model is served. */
const BASE = 'https://example.test/models/retrieval/';

/** The files of models/retrieval, read once. */
const original: Readonly<Record<string, Uint8Array>> = Object.fromEntries(
  readdirSync(RETRIEVAL).map((name) => [name, new Uint8Array(readFileSync(join(RETRIEVAL, name)))]),
);

/**
 * The files of models/retrieval served at {@link BASE} by a stand-in `fetch` over memory,
 * `change`d first (a file set to `undefined` is missing: a 404).
 */
function served(change: Record<string, Uint8Array | string | undefined> = {}): ModelFiles {
  const files = new Map<string, Uint8Array>(Object.entries(original));
  for (const [name, value] of Object.entries(change)) {
    if (value === undefined) files.delete(name);
    else files.set(name, typeof value === 'string' ? new TextEncoder().encode(value) : value);
  }
  return modelFilesFromUrl(BASE, async (url) => {
    const bytes = url.startsWith(BASE) ? files.get(url.slice(BASE.length)) : undefined;
    return bytes === undefined ? new Response(null, { status: 404 }) : new Response(bytes.slice());
  });
}

/** models/retrieval's manifest with `change` applied, as text. */
function manifestWith(change: (json: Record<string, unknown>) => Record<string, unknown>): string {
  const json = JSON.parse(new TextDecoder().decode(original[TASK_MODEL_FILE]));
  return JSON.stringify(change(json));
}

beforeAll(async () => {
  await initBackend('wasm');
});

describe('readTaskModelFiles', () => {
  it('reads models/retrieval over HTTP as loadTaskModel reads it from disk', async () => {
    const fromDisk = await loadTaskModel(RETRIEVAL);
    const overHttp = await readTaskModelFiles(served());
    expect(overHttp.dir).toBe(BASE);
    expect(fromDisk.dir).toBe(RETRIEVAL);
    expect(overHttp.task.name).toBe('retrieval');
    expect(overHttp.task.name).toBe(fromDisk.task.name);
    expect(overHttp.manifest).toEqual(fromDisk.manifest);
    expect(overHttp.model.config).toEqual(fromDisk.model.config);
    expect(overHttp.tokenizer.toJSON()).toEqual(fromDisk.tokenizer.toJSON());
    expect(overHttp.model.toTensors()).toEqual(fromDisk.model.toTensors());
    overHttp.model.dispose();
    fromDisk.model.dispose();
  });

  it('reads the files a visitor picked', async () => {
    const picked = Object.entries(original).map(
      ([name, bytes]) => new File([bytes.slice()], name, { type: 'application/octet-stream' }),
    );
    const loaded = await readTaskModelFiles(modelFilesFromFileList(picked));
    expect([loaded.dir, loaded.task.name]).toEqual(['(picked files)', 'retrieval']);
    loaded.model.dispose();
  });
});

describe('readTaskModelFiles errors name the file by files.pathOf', () => {
  it('a missing lethe-model.json: not a task-model directory', async () => {
    const error = await expectLetheRejection(
      readTaskModelFiles(served({ [TASK_MODEL_FILE]: undefined })),
    );
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', `${BASE}${TASK_MODEL_FILE}`]);
    expect(error.message).toBe(
      `[E_CHECKPOINT] ${BASE}${TASK_MODEL_FILE}: is missing: ${BASE} is not a task-model directory (lethe pretrain writes one)`,
    );
  });

  it('a manifest that is not JSON, or of another version', async () => {
    const corrupt = await expectLetheRejection(
      readTaskModelFiles(served({ [TASK_MODEL_FILE]: '{ nope' })),
    );
    expect([corrupt.code, corrupt.argument]).toEqual(['E_FORMAT', `${BASE}${TASK_MODEL_FILE}`]);
    expect(corrupt.message).toMatch(/is not JSON/);

    const version = manifestWith((json) => ({ ...json, version: 2 }));
    const wrong = await expectLetheRejection(
      readTaskModelFiles(served({ [TASK_MODEL_FILE]: version })),
    );
    expect([wrong.code, wrong.argument]).toEqual(['E_FORMAT', `${BASE}${TASK_MODEL_FILE}`]);
    expect(wrong.message).toMatch(/field "version" is 2; this package reads version 1/);
  });

  it('a tokenizer of another task', async () => {
    const countdown = manifestWith((json) => ({
      ...json,
      task: { name: 'countdown', options: {}, resolved: {} },
    }));
    const error = await expectLetheRejection(
      readTaskModelFiles(served({ [TASK_MODEL_FILE]: countdown })),
    );
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', `${BASE}tokenizer.json`]);
    expect(error.message).toMatch(/not the countdown task's/);
  });

  it('a config that differs from the manifest, a missing tokenizer', async () => {
    const wider = manifestWith((json) => ({
      ...json,
      model: { ...(json.model as object), hidden: 32 },
    }));
    const config = await expectLetheRejection(
      readTaskModelFiles(served({ [TASK_MODEL_FILE]: wider })),
    );
    expect([config.code, config.argument]).toEqual(['E_CHECKPOINT', `${BASE}config.json`]);
    expect(config.message).toMatch(/hidden_size is 64 but lethe-model\.json says 32/);

    const noTokenizer = await expectLetheRejection(
      readTaskModelFiles(served({ 'tokenizer.json': undefined })),
    );
    expect([noTokenizer.code, noTokenizer.argument]).toEqual([
      'E_CHECKPOINT',
      `${BASE}tokenizer.json`,
    ]);
    expect(noTokenizer.message).toMatch(/is missing$/);
  });
});
