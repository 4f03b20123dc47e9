import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PolicyRegistry } from '@lethe/kv-cache';
import { readPolicyDirectory, writePolicyDirectory } from '@lethe/model/node';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import type { NammParameters } from '../../src/policy/namm-parameters';
import { NammPolicy } from '../../src/policy/namm-policy';
import { nammPolicyContents } from '../../src/policy/namm-policy-contents';
import { nammProvider } from '../../src/policy/namm-provider';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { TINY_BAM } from '../train/fixtures';

const root = mkdtempSync(join(tmpdir(), 'namm-policy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const parameters: NammParameters = {
  scorer: TINY_BAM,
  features: 'spectrogram',
  genome: Float64Array.from({ length: scorerParameterCount(TINY_BAM) }, (_, i) => Math.sin(i) / 3),
  normalization: {
    mean: Float32Array.from({ length: 17 }, (_, k) => k / 10),
    std: Float32Array.from({ length: 17 }, (_, k) => 1 + k),
  },
};

const BASE = `sha256:${'ab'.repeat(32)}`;

describe('nammPolicyContents, written by writePolicyDirectory', () => {
  it('writes a directory nammProvider loads back equal, through a PolicyRegistry', async () => {
    const dir = join(root, 'namm');
    const options = { updateInterval: 32, equalHeads: true };
    await writePolicyDirectory(dir, nammPolicyContents(parameters, { options, baseModel: BASE }));
    const manifest = JSON.parse(readFileSync(join(dir, 'policy.json'), 'utf8'));
    expect(manifest).toEqual({
      format: 'lethe-policy',
      version: 1,
      provider: 'namm',
      options: { updateInterval: 32, equalHeads: true },
      parameters: { scorer: TINY_BAM, features: 'spectrogram', tensors: 'namm.safetensors' },
      baseModel: BASE,
    });
    const directory = await readPolicyDirectory(dir);
    expect(await nammProvider.learned!.load(directory)).toEqual(parameters);
    const prepared = await new PolicyRegistry([nammProvider]).prepare('namm', { directory });
    expect(prepared.options).toMatchObject({ updateInterval: 32, equalHeads: true, threshold: 0 });
    const context = {
      model: { layers: 2, kvHeads: 1, queryHeads: 2, headDim: 8, hiddenSize: 16 },
      sequences: 1,
    };
    const { eviction } = prepared.build({ capacity: 64 }, context);
    expect(eviction).toBeInstanceOf(NammPolicy);
    expect((eviction as NammPolicy).prefillChunk).toBe(32);
  });

  it('refuses options nammProvider refuses, bad parameters and a bad base model', () => {
    expectLetheError(
      () => nammPolicyContents(parameters, { options: { updateInterval: 0 } }),
      'E_ARG',
      'options.updateInterval',
    );
    expectLetheError(
      () => nammPolicyContents({ ...parameters, genome: new Float64Array(3) }),
      'E_ARG',
      'genome',
    );
    expectLetheError(
      () => nammPolicyContents(parameters, { baseModel: 'models/lm' }),
      'E_FORMAT',
      'contents.manifest',
    );
  });

  it('writes nothing when the contents are refused', async () => {
    const dir = join(root, 'refused');
    const contents = nammPolicyContents(parameters);
    const bad = { ...contents, files: { 'policy.json': new Uint8Array(1) } };
    await expectLetheRejection(writePolicyDirectory(dir, bad), 'E_ARG', 'contents.files');
    await expect(readFile(join(dir, 'policy.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
