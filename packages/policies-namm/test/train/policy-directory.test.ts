import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPolicyDirectory, PolicyRegistry } from '@lethe/kv-cache';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import type { NammParameters } from '../../src/policy/namm-parameters';
import { NammPolicy } from '../../src/policy/namm-policy';
import { nammProvider } from '../../src/policy/namm-provider';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { writeNammPolicyDirectory } from '../../src/train/policy-directory-writer';
import { TINY_BAM } from './fixtures';

const root = mkdtempSync(join(tmpdir(), 'namm-policy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `PolicyFiles` over a directory of the file system. */
const filesOf = (dir: string) => ({
  location: dir,
  readText: (name: string) => readFile(join(dir, name), 'utf8'),
  readBytes: async (name: string) => new Uint8Array(await readFile(join(dir, name))),
});

const parameters: NammParameters = {
  scorer: TINY_BAM,
  features: 'spectrogram',
  genome: Float64Array.from({ length: scorerParameterCount(TINY_BAM) }, (_, i) => Math.sin(i) / 3),
  normalization: {
    mean: Float32Array.from({ length: 17 }, (_, k) => k / 10),
    std: Float32Array.from({ length: 17 }, (_, k) => 1 + k),
  },
};

describe('writeNammPolicyDirectory', () => {
  it('writes a directory nammProvider loads back equal, through a PolicyRegistry', async () => {
    const dir = join(root, 'namm');
    await writeNammPolicyDirectory(dir, parameters, { updateInterval: 32, equalHeads: true });
    const manifest = JSON.parse(readFileSync(join(dir, 'policy.json'), 'utf8'));
    expect(manifest).toEqual({
      format: 'lethe-policy',
      version: 1,
      provider: 'namm',
      options: { updateInterval: 32, equalHeads: true },
      parameters: { scorer: TINY_BAM, features: 'spectrogram', tensors: 'namm.safetensors' },
    });
    const directory = await openPolicyDirectory(filesOf(dir));
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

  it('refuses options nammProvider refuses and bad parameters, writing nothing', async () => {
    const dir = join(root, 'refused');
    await expectLetheRejection(
      writeNammPolicyDirectory(dir, parameters, { updateInterval: 0 }),
      'E_ARG',
      'options.updateInterval',
    );
    await expectLetheRejection(
      writeNammPolicyDirectory(dir, { ...parameters, genome: new Float64Array(3) }),
      'E_ARG',
      'genome',
    );
    await expect(readFile(join(dir, 'policy.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
