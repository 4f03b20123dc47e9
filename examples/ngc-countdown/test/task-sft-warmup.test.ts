import { fileURLToPath } from 'node:url';
import type { GenerationTask } from '@lethe/eval';
import { type CharTokenizer, type DecoderModel, resizeVocabulary } from '@lethe/model';
import { interoceptionTokenizer } from '@lethe/policies-ngc/train';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskSftWarmup } from '../src/task-sft-warmup';

const MODEL = fileURLToPath(new URL('../../../models/countdown', import.meta.url));

beforeAll(async () => {
  await initBackend('wasm');
});

const weights = (model: DecoderModel): Float32Array[] =>
  [...model.parameters.values()].map((v) => v.dataSync() as Float32Array);

describe('taskSftWarmup', () => {
  it('trains on tagged prompts deterministically, leaks no tensor, and does nothing for 0 steps', async () => {
    const runs: Float32Array[][] = [];
    for (const steps of [0, 2, 2]) {
      const base = await loadTaskModel(MODEL);
      const tokenizer = interoceptionTokenizer(base.tokenizer as CharTokenizer);
      const model = resizeVocabulary(base.model, tokenizer.vocabSize);
      base.model.dispose();
      const before = weights(model);
      const tensors = tf.memory().numTensors;
      await taskSftWarmup({
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
        taskSftWarmup({ model: base.model, task: base.task as GenerationTask, steps, seed: 0 }),
      ).rejects.toThrow(expect.objectContaining({ code: 'E_ARG', argument: 'steps' }));
    }
    base.model.dispose();
  });
});
