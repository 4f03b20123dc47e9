import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ModelDirectory,
  type ModelFiles,
  modelFilesFromFileList,
  modelFilesFromUrl,
  readModelFiles,
} from '../../src/index';
import { readModelDirectory } from '../../src/io/node';
import { HF_FIXTURES } from '../support/hf-fixtures';

const BASE = 'https://models.example/tiny/';

/** A `fetch` serving the files of `dir` below {@link BASE}, 404 for others; the URLs asked. */
function servingFetch(dir: string, asked: string[] = []) {
  return async (url: string): Promise<Response> => {
    asked.push(url);
    const name = url.slice(BASE.length);
    try {
      return new Response(await readFile(join(dir, name)));
    } catch {
      return new Response('not found', { status: 404, statusText: 'Not Found' });
    }
  };
}

/** The files of `dir` as a directory picker gives them (`File`s with their relative path). */
async function pickedFiles(dir: string, folder: string): Promise<File[]> {
  const files = [];
  for (const name of await readdir(dir)) {
    const file = new File([await readFile(join(dir, name))], name);
    Object.defineProperty(file, 'webkitRelativePath', { value: `${folder}/${name}` });
    files.push(file);
  }
  return files;
}

/** What a reader gives for a directory, compared across sources. */
async function summary(loaded: ModelDirectory) {
  const tensors = loaded.model.toTensors();
  const sums = Object.fromEntries(
    Object.entries(tensors).map(([name, t]) => [name, Array.from(t.data.slice(0, 8))]),
  );
  const text = 'Hello, world';
  const summarised = {
    config: loaded.config,
    sums,
    ids: Array.from(loaded.tokenizer!.encode(text)),
    eos: loaded.eosTokenIds,
  };
  loaded.model.dispose();
  return summarised;
}

describe('model directories read from disk, over HTTP and from picked files alike', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it.each(['tiny-qwen2', 'tiny-llama'])('%s (one file / shards)', async (name) => {
    const dir = join(HF_FIXTURES, name);
    const asked: string[] = [];
    const fromDisk = await summary(await readModelDirectory(dir));
    const fromUrl = await summary(
      await readModelFiles(modelFilesFromUrl(BASE.slice(0, -1), servingFetch(dir, asked))),
    );
    const fromPicked = await summary(
      await readModelFiles(modelFilesFromFileList(await pickedFiles(dir, name))),
    );
    expect(fromUrl).toEqual(fromDisk);
    expect(fromPicked).toEqual(fromDisk);
    expect(fromDisk.ids.length).toBeGreaterThan(0);
    // each file fetched once, below the base URL
    expect(new Set(asked).size).toBe(asked.length);
    expect(asked.every((url) => url.startsWith(BASE))).toBe(true);
  });

  it('names the file a server or a picked file fails on, and what is missing', async () => {
    const dir = join(HF_FIXTURES, 'tiny-qwen2');
    const serving = servingFetch(dir);
    const failing = (status: number) => async (url: string) =>
      url.endsWith('/model.safetensors') ? new Response('', { status }) : serving(url);
    await expectLetheRejection(
      readModelFiles(modelFilesFromUrl(BASE, failing(500))),
      'E_CHECKPOINT',
      `${BASE}model.safetensors`,
    );
    // a 404 for the weights: neither layout is there
    const missing = await expectLetheRejection(
      readModelFiles(modelFilesFromUrl(BASE, failing(404))),
      'E_CHECKPOINT',
      `${BASE}model.safetensors`,
    );
    expect(missing.message).toContain('is missing, and so is model.safetensors.index.json');
    const offline = async () => {
      throw new TypeError('fetch failed');
    };
    const unreachable = await expectLetheRejection(
      readModelFiles(modelFilesFromUrl(BASE, offline)),
      'E_CHECKPOINT',
      `${BASE}config.json`,
    );
    expect(unreachable.message).toContain('fetch failed');
    expectLetheError(() => modelFilesFromUrl('models/tiny'), 'E_ARG', 'baseUrl');

    const picked = await pickedFiles(dir, 'tiny-qwen2');
    const withoutConfig = picked.filter((file) => file.name !== 'config.json');
    await expectLetheRejection(
      readModelFiles(modelFilesFromFileList(withoutConfig)),
      'E_CHECKPOINT',
      'tiny-qwen2/config.json',
    );
    const broken = picked.map((file) =>
      file.name === 'tokenizer.json'
        ? {
            name: file.name,
            webkitRelativePath: file.webkitRelativePath,
            arrayBuffer: () => Promise.reject(new Error('the file changed on disk')),
          }
        : file,
    );
    await expectLetheRejection(
      readModelFiles(modelFilesFromFileList(broken)),
      'E_CHECKPOINT',
      'tiny-qwen2/tokenizer.json',
    );
    const elsewhere = new File(['{}'], 'x.json');
    Object.defineProperty(elsewhere, 'webkitRelativePath', { value: 'other/x.json' });
    expectLetheError(() => modelFilesFromFileList([...picked, elsewhere]), 'E_ARG', 'files');
    expectLetheError(() => modelFilesFromFileList([3 as never]), 'E_ARG', 'files');
  });

  it('reads through any ModelFiles a runtime supplies (here: memory)', async () => {
    const dir = join(HF_FIXTURES, 'tiny-qwen2');
    const contents = new Map<string, Uint8Array>();
    for (const name of await readdir(dir)) {
      contents.set(name, new Uint8Array(await readFile(join(dir, name))));
    }
    const memory: ModelFiles = {
      location: 'memory:',
      pathOf: (name) => `memory:${name}`,
      read: async (name) => contents.get(name),
    };
    expect(await summary(await readModelFiles(memory))).toEqual(
      await summary(await readModelDirectory(dir)),
    );
  });
});
