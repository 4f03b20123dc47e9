import { serializeSafetensors } from '@lethe/core';
import { type PolicyDirectory, PolicyRegistry } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { identityNormalization } from '../../src/features/token-features';
import {
  decodeNammParameters,
  encodeNammParameters,
  type NammParameters,
} from '../../src/policy/namm-parameters';
import type { NammPolicy } from '../../src/policy/namm-policy';
import { nammProvider } from '../../src/policy/namm-provider';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';

const SPEC: ScorerSpec = { kind: 'bam', features: 25, hidden: 4 };
const parameters = (
  genome = new Float64Array(scorerParameterCount(SPEC)).map((_, i) => Math.sin(i) / 7),
): NammParameters => ({
  scorer: SPEC,
  features: 'spectrogram',
  genome,
  normalization: { mean: new Float32Array(17).fill(0.01), std: new Float32Array(17).fill(0.5) },
});

/** A policy directory in memory holding `files`. */
function directory(
  manifestParameters: unknown,
  files: Record<string, Uint8Array>,
  options = {},
): PolicyDirectory {
  return {
    files: {
      location: 'memory:namm',
      readText: async () => '',
      readBytes: async (name) => {
        const bytes = files[name];
        if (bytes === undefined) throw new Error(`no file ${name}`);
        return bytes;
      },
    },
    manifest: {
      format: 'lethe-policy',
      version: 1,
      provider: 'namm',
      options,
      parameters: manifestParameters as Record<string, unknown>,
    },
  };
}

const context = {
  model: { layers: 2, kvHeads: 2, queryHeads: 4, headDim: 8, hiddenSize: 16 },
  sequences: 1,
};

describe('NAMM parameters', () => {
  it('round-trip through the manifest and safetensors bit for bit', () => {
    const original = parameters();
    const encoded = encodeNammParameters(original);
    expect(encoded.parameters).toEqual({
      scorer: SPEC,
      features: 'spectrogram',
      tensors: 'namm.safetensors',
    });
    const decoded = decodeNammParameters(encoded.parameters, encoded.tensors, 'x');
    expect(decoded).toEqual(original);
  });

  it('refuse a genome of the wrong length or with NaN, and a bad normalisation, naming them', () => {
    const short = parameters(new Float64Array(5));
    expect(() => encodeNammParameters(short)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'genome' }),
    );
    const nan = parameters();
    nan.genome[3] = Number.NaN;
    expect(() => encodeNammParameters(nan)).toThrowError(
      expect.objectContaining({
        code: 'E_ARG',
        argument: 'genome',
        message: expect.stringContaining('value 3'),
      }),
    );
    const negative = {
      ...parameters(),
      normalization: { mean: new Float32Array(17), std: new Float32Array(17).fill(-1) },
    };
    expect(() => encodeNammParameters(negative)).toThrowError(
      expect.objectContaining({ argument: 'normalization.std' }),
    );
    const wide = { ...parameters(), features: 'age' as const };
    expect(() => encodeNammParameters(wide)).toThrowError(
      expect.objectContaining({ argument: 'scorer.features' }),
    );
  });

  it('refuse a tensors file without the genome, or not safetensors', () => {
    const { parameters: p } = encodeNammParameters(parameters());
    const missing = serializeSafetensors({
      other: { dtype: 'F32', shape: [1], data: Float32Array.of(1) },
    });
    expect(() => decodeNammParameters(p, missing, 'f')).toThrowError(
      expect.objectContaining({ code: 'E_FORMAT', argument: 'f' }),
    );
    expect(() => decodeNammParameters(p, Uint8Array.of(1, 2, 3), 'f')).toThrowError(
      expect.objectContaining({ code: 'E_FORMAT', argument: 'f' }),
    );
  });
});

describe('nammProvider', () => {
  const encoded = encodeNammParameters(parameters());
  const files = { 'namm.safetensors': encoded.tensors };
  const registry = new PolicyRegistry([nammProvider]);

  it('loads a policy directory and builds a policy per budget', async () => {
    const prepared = await registry.prepare('namm', {
      directory: directory(encoded.parameters, files, { updateInterval: 32 }),
    });
    const ceiling = prepared.build({ capacity: 50 }, context).eviction as NammPolicy;
    expect(ceiling.prefillChunk).toBe(32);
    const rate = prepared.build({ keepRatio: 0.5, every: 32 }, context).eviction as NammPolicy;
    expect(rate.prefillChunk).toBe(32);
    expect(() => prepared.build({ keepRatio: 0.5, every: 16 }, context)).toThrowError(
      expect.objectContaining({ code: 'E_BUDGET', argument: 'options.updateInterval' }),
    );
  });

  it('refuses equalHeads beside a rate schedule', async () => {
    const prepared = await registry.prepare('namm', {
      directory: directory(encoded.parameters, files),
      options: { equalHeads: true },
    });
    expect(() => prepared.build({ keepRatio: 0.5, every: 16 }, context)).toThrowError(
      expect.objectContaining({ code: 'E_BUDGET', argument: 'options.equalHeads' }),
    );
  });

  it('refuses manifest parameters that are not a NAMM’s, and a scorer of another width', async () => {
    await expect(
      registry.prepare('namm', { directory: directory({ scorer: 'bam' }, files) }),
    ).rejects.toMatchObject({
      code: 'E_FORMAT',
    });
    const mlp = { ...encoded.parameters, scorer: { kind: 'mlp', features: 25, depth: 2 } };
    await expect(
      registry.prepare('namm', { directory: directory(mlp, files) }),
    ).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'genome',
    });
  });

  it('refuses an update interval below 1 as an option', async () => {
    await expect(
      registry.prepare('namm', {
        directory: directory(encoded.parameters, files),
        options: { updateInterval: 0 },
      }),
    ).rejects.toMatchObject({ code: 'E_ARG' });
  });
});

it('identity normalisation is zero mean, unit deviation', () => {
  const { mean, std } = identityNormalization();
  expect([...mean]).toEqual(new Array(17).fill(0));
  expect([...std]).toEqual(new Array(17).fill(1));
});
