import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { GenerationTask, JsonValue } from '@lethe/eval';
import { runSweep } from '@lethe/eval/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { cellsOfSweeps, type EvalCell } from '../src/eval-cells';
import { evaluationSweeps } from '../src/eval-sweeps';
import { DEFAULT_TRAIN_SETTINGS as D } from '../src/train-settings';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const SFT = path('../../../models/countdown');
/** The first evaluation batch: the evaluation generates 64 problems per batch. */
const BATCH = 64;

let task: GenerationTask;
let recorded: readonly EvalCell[];

beforeAll(async () => {
  await initBackend('wasm');
  const base = await loadTaskModel(SFT);
  base.model.dispose();
  task = base.task as GenerationTask;
  recorded = JSON.parse(await readFile(path('../results/ngc-eval.json'), 'utf8')).cells;
});

/** The committed per-problem outcomes of a cell, first batch. */
function outcomesOf(cells: readonly EvalCell[], model: string, method: string, rate: number) {
  const cell = cells.find((c) => c.model === model && c.method === method && c.rate === rate);
  expect(cell, `${model}/${method}/${rate}`).toBeDefined();
  return cell!.outcomes.slice(0, BATCH);
}

describe('the committed RL models are the evaluated ones, and the harness evaluates as recorded', () => {
  it('no-evict (full cache, SnapKV) and ngc-cont (NGC) at ε = 0.4: the first batch’s outcomes', async () => {
    // The evaluation's own sweep, cut to the first batch, SnapKV and the committed NGC model.
    const [sweep] = evaluationSweeps({
      task: { name: task.name, options: task.options as Record<string, JsonValue> },
      baseline: path('../../../models/countdown-rl'),
      base: SFT,
      runs: [['ngc-cont', path('../../../models/countdown-ngc')]],
      heuristicsOn: ['no-evict'],
      rates: [0.4],
      cadence: D.cadence,
      examples: BATCH,
      evalSeed: 0,
      batchSize: BATCH,
    });
    const nameOf = (p: JsonValue) => (typeof p === 'string' ? p : (p as { name: string }).name);
    const policies = (sweep!.config.policies as JsonValue[]).filter((p) =>
      ['full', 'snapkv', 'ngc'].includes(nameOf(p)),
    );
    const results = await runSweep({ ...sweep!.config, policies });
    const { cells } = cellsOfSweeps([{ model: 'no-evict', results }]);
    expect(cells.map((c) => `${c.model}/${c.method}/${c.rate}`)).toEqual([
      'no-evict/full/0',
      'no-evict/snapkv/0.4',
      'ngc-cont/ngc/0.4',
    ]);
    for (const cell of cells) {
      expect(cell.outcomes).toEqual(outcomesOf(recorded, cell.model, cell.method, cell.rate));
    }
  }, 300_000);
});
