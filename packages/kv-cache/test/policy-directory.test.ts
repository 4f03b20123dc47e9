import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  checkBaseModel,
  checkPolicyContents,
  checkPolicyManifest,
  formatPolicyManifest,
  memoryPolicyDirectory,
  openPolicyDirectory,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  type PolicyManifest,
} from '../src/index';

const BASE = `sha256:${'0123456789abcdef'.repeat(4)}`;
const manifest: PolicyManifest = {
  format: POLICY_FORMAT,
  version: POLICY_FORMAT_VERSION,
  provider: 'namm',
  options: { updateInterval: 32 },
  parameters: { tensors: 'namm.safetensors' },
  baseModel: BASE,
};

describe('the policy manifest', () => {
  it('round-trips through its text, base model included', async () => {
    const text = formatPolicyManifest(manifest);
    const opened = await openPolicyDirectory({
      location: 'dir',
      readText: async () => text,
      readBytes: async () => new Uint8Array(),
    });
    expect(opened.manifest).toEqual(manifest);
  });

  it('refuses a base model that is not a model identity, naming the manifest', () => {
    for (const baseModel of ['models/lm', 'sha256:abc', `sha256:${'A'.repeat(64)}`, 42]) {
      expectLetheError(
        () => checkPolicyManifest({ ...manifest, baseModel }, 'dir/policy.json'),
        'E_FORMAT',
        'dir/policy.json',
      );
    }
  });
});

describe('policy directory contents in memory', () => {
  const contents = { manifest, files: { 'namm.safetensors': Uint8Array.of(1, 2, 3) } };

  it('serves its files and refuses one it does not hold, naming it', async () => {
    const directory = memoryPolicyDirectory(contents);
    expect(directory.files.location).toBe('memory:namm');
    expect(await directory.files.readBytes('namm.safetensors')).toEqual(Uint8Array.of(1, 2, 3));
    await expectLetheRejection(
      directory.files.readBytes('other.safetensors'),
      'E_CHECKPOINT',
      'memory:namm/other.safetensors',
    );
    await expectLetheRejection(directory.files.readText('policy.json'), 'E_CHECKPOINT');
  });

  it('refuses file names with a path, the manifest itself, and contents that are not bytes', () => {
    for (const name of ['policy.json', '../x', 'a/b', 'a\\b', '', '..']) {
      expectLetheError(
        () => checkPolicyContents({ manifest, files: { [name]: new Uint8Array() } }),
        'E_ARG',
        'contents.files',
      );
    }
    expectLetheError(
      () => checkPolicyContents({ manifest, files: { x: [1, 2] as unknown as Uint8Array } }),
      'E_ARG',
      'contents.files',
    );
    expectLetheError(
      () => checkPolicyContents({ manifest: { ...manifest, version: 2 as 1 }, files: {} }),
      'E_FORMAT',
      'contents.manifest',
    );
  });
});

describe('checkBaseModel', () => {
  it('passes the base model and a directory without one; refuses another, naming the manifest', () => {
    const directory = memoryPolicyDirectory({ manifest, files: {} }, 'policies/namm');
    checkBaseModel(directory, BASE);
    const { baseModel: _, ...anonymous } = manifest;
    checkBaseModel(
      memoryPolicyDirectory({ manifest: anonymous, files: {} }),
      `sha256:${'f'.repeat(64)}`,
    );
    expectLetheError(
      () => checkBaseModel(directory, `sha256:${'f'.repeat(64)}`, 'models/lm'),
      'E_CHECKPOINT',
      'policies/namm/policy.json',
    );
  });
});
