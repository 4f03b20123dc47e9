import { fileURLToPath } from 'node:url';
import { LetheError } from '@lethe/core';
import type { GenerationTask } from '@lethe/eval';
import { loadTaskModel, REPLACEMENT_STRIDE } from '@lethe/eval/node';
import { type CharTokenizer, type DecoderModel, resizeVocabulary } from '@lethe/model';
import { evictionRateTag } from '@lethe/policies-ngc';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { interoceptionTokenizer } from '../src/interoception-tokenizer';
import { SFT_WARMUP_INDEX_OFFSET, sftWarmup, warmupTask } from '../src/sft-warmup';

const MODEL = fileURLToPath(new URL('../../../models/countdown', import.meta.url));

beforeAll(async () => {
  await initBackend('wasm');
});

/** A task whose example `(seed, index)` has the prompt `s<seed>i<index>`. */
function namedTask(): GenerationTask {
  return {
    kind: 'generation',
    name: 'named',
    options: {},
    tokenizer: { vocabSize: 1 } as unknown as CharTokenizer,
    maxNewTokens: 4,
    stopText: '.',
    example: (seed, index) => ({
      task: 'named',
      seed,
      index,
      prompt: `s${seed}i${index}`,
      target: 'x.',
      data: {},
    }),
    verify: () => ({ correct: true, score: 1 }),
  };
}

const weights = (model: DecoderModel): Float32Array[] =>
  [...model.parameters.values()].map((v) => v.dataSync() as Float32Array);

describe('warmupTask', () => {
  it('draws past the RL prompts, skips held-out problems and tags prompts by index', () => {
    const task = namedTask();
    const tokenizer = { vocabSize: 2 } as unknown as CharTokenizer;
    const heldOut = new Set([`s7i${SFT_WARMUP_INDEX_OFFSET + 1}`]);
    const plain = warmupTask(task, heldOut);
    expect(plain.example(7, 0).prompt).toBe(`s7i${SFT_WARMUP_INDEX_OFFSET}`);
    expect(plain.example(7, 1).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 1 + REPLACEMENT_STRIDE}`,
    );
    expect(plain.tokenizer).toBe(task.tokenizer);
    const tagged = warmupTask(task, heldOut, { tokenizer, rates: [0, 0.25] });
    expect(tagged.tokenizer).toBe(tokenizer);
    expect(tagged.example(7, 2).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 2}${evictionRateTag(0)}`,
    );
    expect(tagged.example(7, 1).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 1 + REPLACEMENT_STRIDE}${evictionRateTag(0.25)}`,
    );
  });
});

describe('sftWarmup', () => {
  it('trains on tagged prompts deterministically, leaks no tensor, and does nothing for 0 steps', async () => {
    const runs: Float32Array[][] = [];
    for (const steps of [0, 2, 2]) {
      const base = await loadTaskModel(MODEL);
      const tokenizer = interoceptionTokenizer(base.tokenizer as CharTokenizer);
      const model = resizeVocabulary(base.model, tokenizer.vocabSize);
      base.model.dispose();
      const before = weights(model);
      const tensors = tf.memory().numTensors;
      await sftWarmup({
        model,
        task: base.task as GenerationTask,
        steps,
        seed: 0,
        interoception: { tokenizer, rates: [0, 0.5] },
      });
      expect(tf.memory().numTensors).toBe(tensors);
      const after = weights(model);
      if (steps === 0) expect(after).toEqual(before);
      else expect(after).not.toEqual(before);
      runs.push(after);
      model.dispose();
    }
    expect(runs[2]).toEqual(runs[1]);
  }, 300_000); // ~20 s alone; 110–155 s when `npm test` runs it beside the other packages' tests

  it('rejects a negative or fractional step count, naming it', async () => {
    const base = await loadTaskModel(MODEL);
    for (const steps of [-1, 1.5]) {
      await expect(
        sftWarmup({ model: base.model, task: base.task as GenerationTask, steps, seed: 0 }),
      ).rejects.toThrow(LetheError);
      await expect(
        sftWarmup({ model: base.model, task: base.task as GenerationTask, steps, seed: 0 }),
      ).rejects.toThrow(/steps/);
    }
    base.model.dispose();
  });
});
