import { createHash } from 'node:crypto';
import { memoryPolicyDirectory, POLICY_FORMAT, POLICY_FORMAT_VERSION } from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecoderModel } from '../../src/decoder/decoder-model';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/io/checkpoint';
import { defaultConfig } from '../../src/io/model-config';
import { checkPolicyBaseModel, modelIdentity } from '../../src/io/model-identity';

beforeAll(() => initBackend('cpu'));

const config = defaultConfig({
  vocab_size: 11,
  hidden_size: 8,
  intermediate_size: 16,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
});

/** The identity computed independently: node:crypto over the documented recipe. */
function referenceIdentity(model: DecoderModel): string {
  const sorted = (value: unknown): unknown =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
        )
      : value;
  const { torch_dtype: _, ...config } = model.config as unknown as Record<string, unknown>;
  const lines = [JSON.stringify(sorted(config))];
  for (const name of [...model.parameters.keys()].sort()) {
    const v = model.parameters.get(name)!;
    const data = v.dataSync() as Float32Array;
    const digest = createHash('sha256')
      .update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
      .digest('hex');
    lines.push(`${name}:${v.shape.join('x')}:${digest}`);
  }
  return `sha256:${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
}

describe('modelIdentity', () => {
  it('is the SHA-256 of the config and the weights, as node:crypto computes it', async () => {
    const model = DecoderModel.random(config, 1);
    const identity = await modelIdentity(model);
    expect(identity).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(identity).toBe(referenceIdentity(model));
    model.dispose();
  });

  it('survives a checkpoint round trip, and changes with one weight or one config field', async () => {
    const model = DecoderModel.random(config, 1);
    const identity = await modelIdentity(model);
    const saved = decodeCheckpoint(
      encodeCheckpoint({ config: model.config, tensors: model.toTensors() }),
    );
    const reloaded = DecoderModel.fromTensors(saved.config, saved.tensors);
    expect(await modelIdentity(reloaded)).toBe(identity);

    const tensors = model.toTensors();
    const norm = tensors['model.norm.weight']!;
    norm.data[0] = Math.fround(norm.data[0]! * (1 + 2 ** -20)); // one weight nudged
    const nudged = DecoderModel.fromTensors(model.config, tensors);
    expect(await modelIdentity(nudged)).not.toBe(identity);
    const other = DecoderModel.fromTensors(
      { ...model.config, rms_norm_eps: 1e-5 },
      model.toTensors(),
    );
    expect(await modelIdentity(other)).not.toBe(identity);
    const seeded = DecoderModel.random(config, 2);
    expect(await modelIdentity(seeded)).not.toBe(identity);
    for (const m of [model, reloaded, nudged, other, seeded]) m.dispose();
  });
});

describe('checkPolicyBaseModel', () => {
  const directory = (baseModel?: string) =>
    memoryPolicyDirectory(
      {
        manifest: {
          format: POLICY_FORMAT,
          version: POLICY_FORMAT_VERSION,
          provider: 'gsa',
          options: {},
          ...(baseModel === undefined ? {} : { baseModel }),
        },
        files: {},
      },
      'policies/gsa-lm',
    );

  it('accepts the base model and a directory that names none; refuses another model by name', async () => {
    const model = DecoderModel.random(config, 1);
    const other = DecoderModel.random(config, 2); // same shape, other weights
    const identity = await modelIdentity(model);
    await checkPolicyBaseModel(directory(identity), model);
    await checkPolicyBaseModel(directory(), other);
    await expectLetheRejection(
      checkPolicyBaseModel(directory(identity), other, 'models/retrieval'),
      'E_CHECKPOINT',
      'policies/gsa-lm/policy.json',
    );
    await expect(
      checkPolicyBaseModel(directory(identity), other, 'models/retrieval'),
    ).rejects.toThrow(
      /trained on the model sha256:[0-9a-f]{12}; models\/retrieval is sha256:[0-9a-f]{12}/,
    );
    model.dispose();
    other.dispose();
  });
});
