import { parseSafetensors, type SafetensorsTensor, serializeSafetensors } from '@lethe/core';
import { maxQueryWindow, type PolicyDirectory, PolicyRegistry } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { identityNormalization } from '../../src/features/token-features';

const identityStats = identityNormalization;

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
  genome: Float64Array = new Float64Array(scorerParameterCount(SPEC)).map(
    (_, i) => Math.sin(i) / 7,
  ),
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
      argument: 'memory:namm/namm.safetensors',
      message: expect.stringContaining(
        `tensor "genome": has ${scorerParameterCount(SPEC)} values; the mlp scorer needs`,
      ),
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

  it('refuses an update interval past what the cache holds, naming it', async () => {
    const prepare = (updateInterval?: number) =>
      registry.prepare('namm', {
        directory: directory(encoded.parameters, files),
        options: { updateInterval },
      });
    // No cache holds 1e9 queries, whatever the model: the schema refuses it.
    await expect(prepare(1e9)).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'options.updateInterval',
    });
    // 4 query heads × 8 floats: the cache holds maxQueryWindow(4, 8) = 2^19 queries.
    const most = maxQueryWindow(4, 8);
    expect((await prepare(most)).build({ capacity: 50 }, context).eviction).toBeDefined();
    for (const interval of [most + 1, 1e7]) {
      const prepared = await prepare(interval);
      expect(() => prepared.build({ capacity: 50 }, context)).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'options.updateInterval' }),
      );
    }
    const rate = await prepare();
    expect(rate.build({ keepRatio: 0.5, every: most }, context).eviction).toBeDefined();
    expect(() => rate.build({ keepRatio: 0.5, every: most + 1 }, context)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'budget.every' }),
    );
  });
});

describe('a NAMM tensors file', () => {
  const { parameters: manifest, tensors: bytes } = encodeNammParameters(parameters());
  const FILE = 'memory:namm/namm.safetensors';
  /** The tensors file with `name` replaced (F64 for the genome, F32 otherwise). */
  const tampered = (name: string, data: Float64Array | Float32Array): Uint8Array => {
    const tensors: Record<string, SafetensorsTensor> = parseSafetensors(bytes, {
      copy: true,
    }).tensors;
    const shape = [data.length];
    const tensor: SafetensorsTensor =
      data instanceof Float64Array ? { dtype: 'F64', shape, data } : { dtype: 'F32', shape, data };
    return serializeSafetensors({ ...tensors, [name]: tensor });
  };
  const load = (file: Uint8Array) =>
    new PolicyRegistry([nammProvider]).prepare('namm', {
      directory: directory(manifest, { 'namm.safetensors': file }),
    });
  const refusal = (tensor: string, message: string) =>
    expect.objectContaining({
      code: 'E_ARG',
      argument: FILE,
      message: expect.stringContaining(`tensor "${tensor}": ${message}`),
    });

  it('names the file and the tensor of a bad size or a non-finite value', async () => {
    const genome = parameters().genome;
    const nan = genome.slice();
    nan[3] = Number.NaN;
    const cases: [Uint8Array, string, string][] = [
      [tampered('genome', genome.subarray(1)), 'genome', `has ${genome.length - 1} values`],
      [tampered('genome', nan), 'genome', 'value 3 is NaN'],
      [tampered('spectrogram_mean', new Float32Array(16)), 'spectrogram_mean', 'must hold 17'],
      [
        tampered('spectrogram_std', new Float32Array(17).fill(Number.POSITIVE_INFINITY)),
        'spectrogram_std',
        'value 0 is Infinity',
      ],
      [tampered('spectrogram_std', new Float32Array(17).fill(-1)), 'spectrogram_std', 'value 0'],
    ];
    for (const [file, tensor, message] of cases) {
      await expect(load(file)).rejects.toThrowError(refusal(tensor, message));
      expect(() => decodeNammParameters(manifest, file, FILE)).toThrowError(
        refusal(tensor, message),
      );
    }
    // A wrong dtype or rank names the file too (E_FORMAT).
    const f32 = serializeSafetensors({
      ...parseSafetensors(bytes, { copy: true }).tensors,
      genome: { dtype: 'F32', shape: [genome.length], data: Float32Array.from(genome) },
    });
    await expect(load(f32)).rejects.toMatchObject({ code: 'E_FORMAT', argument: FILE });
  });

  it('refuses at load a genome whose scores would overflow float32 (1e300), naming it', async () => {
    const genome = parameters().genome;
    genome[5] = 1e300;
    const error = expect.objectContaining({
      code: 'E_ARG',
      argument: FILE,
      message: expect.stringMatching(
        /tensor "genome": could make scores overflow float32.*largest parameter is 1e\+300 \(value 5, in Wq\)/,
      ),
    });
    await expect(load(tampered('genome', genome))).rejects.toThrowError(error);
    // In memory the same rule names the argument.
    expect(() => encodeNammParameters(parameters(genome))).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'genome' }),
    );
    // A normalisation that sends the features themselves past float32 is the statistics' fault.
    const tiny = {
      ...parameters(),
      normalization: { ...identityStats(), std: new Float32Array(17) },
    };
    tiny.normalization.mean[0] = 3e38;
    expect(() => encodeNammParameters(tiny)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'normalization' }),
    );
  });
});

it('identity normalisation is zero mean, unit deviation', () => {
  const { mean, std } = identityNormalization();
  expect([...mean]).toEqual(new Array(17).fill(0));
  expect([...std]).toEqual(new Array(17).fill(1));
});
