import { join } from 'node:path';
import type { GenerationTask } from '@lethe/eval';
import { memoryPolicyDirectory } from '@lethe/kv-cache';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { decodeNammParameters } from '@lethe/policies-namm';
import { taskVariant } from '@lethe/task-models';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { normalisationShift, renormalisedNamm } from '../src/renormalisation';

const models = join(__dirname, '../../../models');
const NIAH_1K = { member: 'niah-multi', contextChars: 1024 };
/** namm-suite-niah1k's scorer and features (its policy.json). */
const BAM_SPECTROGRAM = {
  scorer: { kind: 'bam', features: 25, hidden: 32 },
  features: 'spectrogram',
} as const;

beforeAll(async () => {
  await initBackend('wasm');
});

async function renormaliseOn(modelDir: string) {
  const source = await nodePolicyStore().open(join(models, 'namm-suite-niah1k'));
  const { model, task } = await loadTaskModel(join(models, modelDir));
  try {
    const variant = taskVariant(task, NIAH_1K, 'options') as GenerationTask;
    const result = await renormalisedNamm(source, model, variant, 32);
    return { source, result };
  } finally {
    model.dispose();
  }
}

describe('renormalisedNamm', () => {
  it('gives back the committed directory, byte for byte, on the model it was evolved on', async () => {
    // The evolution measured its normalisation on the same 32 prompts before generation 1.
    const { source, result } = await renormaliseOn('suite-retrieval-4k');
    const files = result.contents.files;
    expect(Object.keys(files)).toEqual(['namm.safetensors']);
    expect(files['namm.safetensors']).toEqual(await source.files.readBytes('namm.safetensors'));
    expect(result.after).toEqual(result.before);
    expect(result.contents.manifest).toEqual(source.manifest);
  });

  it('keeps the genome, options and base model on another model, and measures there', async () => {
    const { source, result } = await renormaliseOn('suite-retrieval-l3-2k');
    expect(result.contents.manifest).toEqual(source.manifest);
    expect(result.after.std).not.toEqual(result.before.std);
    const decode = (bytes: Uint8Array) =>
      decodeNammParameters(BAM_SPECTROGRAM, bytes, 'namm.safetensors');
    const moved = decode(result.contents.files['namm.safetensors']!);
    expect(moved.genome).toEqual(decode(await source.files.readBytes('namm.safetensors')).genome);
    expect(moved.normalization).toEqual(result.after);
    // A directory the registry's NAMM loads.
    const directory = memoryPolicyDirectory(result.contents, 'moved');
    (await createDefaultRegistry().prepare('namm', { directory })).release();
  });
});

describe('normalisationShift', () => {
  it('measures the mean shift in old standard deviations and the ratio of deviations', () => {
    const before = { mean: Float32Array.of(1, 0), std: Float32Array.of(2, 0.5) };
    const after = { mean: Float32Array.of(2, 0), std: Float32Array.of(4, 0.5) };
    expect(normalisationShift(before, after)).toEqual({ meanShift: [0.5, 0], stdRatio: [2, 1] });
  });
});
