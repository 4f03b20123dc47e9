import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ModelFiles, modelFilesFromUrl, readModelFiles } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../src/default-registry';
import { filesPolicyStore, type ReadPolicyModel } from '../src/files-policy-store';
import { nodePolicyStore } from '../src/node-policy-store';

const MODELS = join(__dirname, '../../../models');
/** Where the tests pretend `models/` is served. */
const SERVER = 'https://example.test/models/';

/** The files of `models/<dir>` by URL, read once. */
function filesOf(dir: string): [string, Uint8Array][] {
  return readdirSync(join(MODELS, dir)).map((name) => [
    `${SERVER}${dir}/${name}`,
    new Uint8Array(readFileSync(join(MODELS, dir, name))),
  ]);
}

const ALL = new Map([...filesOf('namm-retrieval'), ...filesOf('countdown-ngc')]);

/**
 * A store over `models/namm-retrieval` and `models/countdown-ngc` served at {@link SERVER} by a
 * stand-in `fetch` over memory, less the files (URLs) in `missing` (404s).
 */
function servedStore(missing: readonly string[] = [], read: ReadPolicyModel = readModelFiles) {
  const served = new Map([...ALL].filter(([url]) => !missing.includes(url)));
  const fetchFile = async (url: string) => {
    const bytes = served.get(url);
    return bytes === undefined ? new Response(null, { status: 404 }) : new Response(bytes.slice());
  };
  return filesPolicyStore((dir) => modelFilesFromUrl(dir, fetchFile), read);
}

beforeAll(async () => {
  await initBackend('wasm');
});

describe('filesPolicyStore over URLs', () => {
  it('opens models/namm-retrieval with the manifest nodePolicyStore reads', async () => {
    const served = await servedStore().open(`${SERVER}namm-retrieval`);
    const onDisk = await nodePolicyStore().open(join(MODELS, 'namm-retrieval'));
    expect(served.manifest).toEqual(onDisk.manifest);
    expect(served.files.location).toBe(`${SERVER}namm-retrieval`);
    expect(await served.files.readBytes('namm.safetensors')).toEqual(
      await onDisk.files.readBytes('namm.safetensors'),
    );
    expect(await served.files.readText('checkpoint.json')).toBe(
      await onDisk.files.readText('checkpoint.json'),
    );
    // A trailing slash names the same directory, and the files the same way.
    const slashed = await servedStore().open(`${SERVER}namm-retrieval/`);
    expect(slashed.files.location).toBe(`${SERVER}namm-retrieval`);
    const prepared = await createDefaultRegistry().prepare('namm', { directory: served });
    expect([prepared.name, prepared.options.updateInterval]).toEqual(['namm', 64]);
    prepared.release();
  });

  it('loads the model of models/countdown-ngc (".") as nodePolicyStore loads it', async () => {
    const onDisk = await nodePolicyStore().loadModel(join(MODELS, 'countdown-ngc'), '.');
    const store = servedStore();
    const dir = `${SERVER}countdown-ngc`;
    const { manifest } = await store.open(dir);
    expect(manifest.model).toBe('.');
    const served = await store.loadModel(dir, manifest.model!);
    expect(served.model.config).toEqual(onDisk.model.config);
    expect(served.model.toTensors()).toEqual(onDisk.model.toTensors());
    expect(served.tokenizer!.toJSON()).toEqual(onDisk.tokenizer!.toJSON());
    served.model.dispose();
    onDisk.model.dispose();
    // The directory's URL with a trailing slash reads the same files.
    const slashed = await store.loadModel(`${dir}/`, '.');
    expect(slashed.model.config).toEqual(onDisk.model.config);
    slashed.model.dispose();
  });

  it('reads a model without a tokenizer, asking readModel for an optional one', async () => {
    const options: unknown[] = [];
    const read: ReadPolicyModel = (files, given) => {
      options.push(given);
      return readModelFiles(files, given);
    };
    const store = servedStore([`${SERVER}countdown-ngc/tokenizer.json`], read);
    const loaded = await store.loadModel(`${SERVER}namm-retrieval`, '../countdown-ngc');
    expect(options).toEqual([{ tokenizer: 'optional' }]);
    expect('tokenizer' in loaded).toBe(false);
    loaded.model.dispose();
  });

  it('names the URL of a missing file: E_CHECKPOINT "is missing"', async () => {
    const tensors = `${SERVER}namm-retrieval/namm.safetensors`;
    const store = servedStore([tensors]);
    const directory = await store.open(`${SERVER}namm-retrieval`);
    const direct = await expectLetheRejection(directory.files.readBytes('namm.safetensors'));
    expect([direct.code, direct.argument, direct.message]).toEqual([
      'E_CHECKPOINT',
      tensors,
      `[E_CHECKPOINT] ${tensors}: is missing`,
    ]);
    const prepared = await expectLetheRejection(
      createDefaultRegistry().prepare('namm', { directory }),
    );
    expect([prepared.code, prepared.argument]).toEqual(['E_CHECKPOINT', tensors]);

    const manifest = `${SERVER}namm-retrieval/policy.json`;
    const noManifest = await expectLetheRejection(
      servedStore([manifest]).open(`${SERVER}namm-retrieval`),
    );
    expect([noManifest.code, noManifest.argument]).toEqual(['E_CHECKPOINT', manifest]);

    const noModel = await expectLetheRejection(
      servedStore().loadModel(`${SERVER}namm-retrieval`, '.'),
    );
    expect([noModel.code, noModel.argument]).toEqual([
      'E_CHECKPOINT',
      `${SERVER}namm-retrieval/config.json`,
    ]);
  });
});

describe('filesPolicyStore over paths', () => {
  it('joins a relative model to a path directory without node:path', async () => {
    const asked: string[] = [];
    const memory = (dir: string): ModelFiles => {
      asked.push(dir);
      const pathOf = (name: string) => `${dir}/${name}`;
      return {
        location: dir,
        pathOf,
        read: async (name) => ALL.get(`${SERVER}${dir.replace(/^models\//, '')}/${name}`),
      };
    };
    const store = filesPolicyStore(memory, readModelFiles);
    const directory = await store.open('models/countdown-ngc');
    expect(directory.files.location).toBe('models/countdown-ngc');
    const loaded = await store.loadModel('models/namm-retrieval', '../countdown-ngc');
    expect(asked).toEqual(['models/countdown-ngc', 'models/countdown-ngc']);
    expect(loaded.tokenizer).toBeDefined();
    loaded.model.dispose();
    const missing = await expectLetheRejection(directory.files.readText('nowhere.json'));
    expect([missing.code, missing.argument]).toEqual([
      'E_CHECKPOINT',
      'models/countdown-ngc/nowhere.json',
    ]);
  });

  it('refuses arguments that are not functions', () => {
    const noFiles = expectLetheError(() => filesPolicyStore(undefined as never, readModelFiles));
    expect([noFiles.code, noFiles.argument]).toEqual(['E_ARG', 'filesOf']);
    const noReader = expectLetheError(() =>
      filesPolicyStore((dir) => modelFilesFromUrl(dir), undefined as never),
    );
    expect([noReader.code, noReader.argument]).toEqual(['E_ARG', 'readModel']);
  });
});
