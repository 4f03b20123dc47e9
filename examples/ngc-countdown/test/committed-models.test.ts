import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { GenerationTask } from '@lethe/eval';
import { loadTaskModel, readModelDirectory } from '@lethe/eval/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { evalPolicy, SNAPKV_WINDOW } from '../src/eval-policy';
import type { EvalResults } from '../src/eval-results';
import { evaluateMethod } from '../src/evaluate-method';
import { DEFAULT_TRAIN_SETTINGS as D } from '../src/train-settings';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const SFT = path('../../../models/countdown');
/** The committed RL models and the labels their cells carry in the committed evaluation. */
const MODELS = {
  'no-evict': path('../../../models/countdown-rl'),
  'ngc-cont': path('../../../models/countdown-ngc'),
};
/** The first evaluation batch: `pnpm evaluate` generates 64 problems per call. */
const BATCH = 64;

let task: GenerationTask;
let results: EvalResults;

beforeAll(async () => {
  await initBackend('wasm');
  const base = await loadTaskModel(SFT);
  base.model.dispose();
  task = base.task as GenerationTask;
  results = JSON.parse(await readFile(path('../results/ngc-eval.json'), 'utf8'));
});

/** The committed per-problem outcomes of a cell, first batch. */
function recorded(model: string, method: string, rate: number) {
  const cell = results.cells.find(
    (c) => c.model === model && c.method === method && c.rate === rate,
  );
  expect(cell, `${model}/${method}/${rate}`).toBeDefined();
  return cell!.outcomes.slice(0, BATCH);
}

describe('the committed RL models are the evaluated ones', () => {
  const cases: [keyof typeof MODELS, string, number][] = [
    ['no-evict', 'full', 0],
    ['no-evict', 'snapkv', 0.4],
    ['ngc-cont', 'ngc', 0.4],
  ];
  it.each(cases)(
    '%s, %s at ε = %s: the recorded outcomes of the first batch',
    async (label, method, rate) => {
      const { model } = await readModelDirectory(MODELS[label]);
      const examples = Array.from({ length: BATCH }, (_, i) => task.example(0, i));
      const schedule = { rate, cadence: D.cadence, blockSize: D.blockSize, window: SNAPKV_WINDOW };
      const outcomes = await evaluateMethod({
        model,
        task,
        examples,
        batchSize: BATCH,
        policy: () =>
          method === 'full'
            ? undefined
            : evalPolicy(method, method === 'ngc' ? { ...schedule, window: D.window } : schedule),
      });
      model.dispose();
      expect(outcomes).toEqual(recorded(label, method, rate));
    },
  );
});
