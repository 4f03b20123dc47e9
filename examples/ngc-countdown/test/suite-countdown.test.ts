import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTask, type GenerationTask, type JsonValue, suiteBpeTokenizer } from '@lethe/eval';
import { runSweep } from '@lethe/eval/node';
import { HfTokenizer } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { loadTaskModel, pretrainTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countdownNgcTask } from '../src/countdown-ngc-task';
import { countdownTaskOf, SUITE_COUNTDOWN_MEMBER } from '../src/countdown-task';
import { cellsOfSweeps } from '../src/eval-cells';
import { evaluationSweeps } from '../src/eval-sweeps';
import { NGC_RUN_FILE } from '../src/run-file';
import { trainRun } from '../src/train-run';
import { DEFAULT_TRAIN_SETTINGS, type TrainSettings } from '../src/train-settings';

let root: string;
/** An untrained suite model (two updates): the pipeline, not its scores, is under test. */
let suiteModel: string;

beforeAll(async () => {
  await initBackend('wasm');
  root = await mkdtemp(join(tmpdir(), 'lethe-ngc-suite-'));
  suiteModel = join(root, 'suite');
  const result = await pretrainTaskModel({
    task: 'suite',
    taskOptions: { contextChars: 256 },
    modelSize: { hidden: 16, layers: 2, heads: 2, kvHeads: 1, intermediate: 32 },
    steps: 2,
    batchSize: 2,
    evalExamples: 0,
    out: suiteModel,
  });
  result.model.dispose();
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('NGC on the suite', () => {
  it("trains on a suite model's verbose Countdown, its BPE reading the tag as text, and evaluates the run", async () => {
    const out = join(root, 'ngc');
    const settings: TrainSettings = {
      ...DEFAULT_TRAIN_SETTINGS,
      model: suiteModel,
      variant: 'ngc',
      steps: 1,
      promptsPerStep: 2,
      groupSize: 2,
      retention: [0.5],
      maxNewTokens: 12,
      checkpointEvery: 1,
      interoception: true,
    };
    await trainRun(settings, { out, command: 'test' });
    const run = JSON.parse(await readFile(join(out, NGC_RUN_FILE), 'utf8'));
    expect(run.task).toEqual({
      name: 'suite',
      options: {
        member: SUITE_COUNTDOWN_MEMBER,
        contextChars: 256,
        minContextChars: 256,
        countdownGoal: 'checked',
      },
    });
    // The suite's BPE as it was: the tag needs no new tokens, so no new embedding rows.
    const trained = await readModelDirectory(out);
    expect(trained.tokenizer).toBeInstanceOf(HfTokenizer);
    expect(trained.tokenizer?.toJSON()).toEqual(suiteBpeTokenizer().toJSON());
    expect(trained.model.config.vocab_size).toBe(suiteBpeTokenizer().vocabSize);
    trained.model.dispose();

    // Its training prompts are verbose Countdown's, tagged in BPE tokens.
    const { task } = await countdownOf(suiteModel);
    const example = countdownNgcTask(task, 0, 2, suiteBpeTokenizer()).example(0, 0);
    expect((example.data as { member: string }).member).toBe(SUITE_COUNTDOWN_MEMBER);

    const [sweep] = evaluationSweeps({
      task: { name: task.name, options: task.options as Record<string, JsonValue> },
      baseline: suiteModel,
      base: suiteModel,
      runs: [['ngc', out]],
      heuristicsOn: ['no-evict'],
      rates: [0.5],
      cadence: DEFAULT_TRAIN_SETTINGS.cadence,
      examples: 2,
      evalSeed: 0,
      batchSize: 2,
    });
    const { cells } = cellsOfSweeps([
      { model: 'no-evict', results: await runSweep(sweep!.config) },
    ]);
    const ngc = cells.find((c) => c.method === 'ngc')!;
    expect(ngc.outcomes).toHaveLength(2);
  }, 180_000);

  it('poses verbose Countdown at a suite model’s longest context, whatever spread it was trained on', () => {
    const spread = createTask('suite', { contextChars: 512, minContextChars: 256 });
    const fixed = createTask('suite', { contextChars: 512 });
    for (const task of [spread, fixed] as GenerationTask[]) {
      expect(countdownTaskOf({ task }).options).toEqual({
        member: SUITE_COUNTDOWN_MEMBER,
        contextChars: 512,
        minContextChars: 512,
        countdownGoal: 'checked',
      });
    }
    // and in the trace form the model was trained on
    const restated = createTask('suite', { contextChars: 512, countdownGoal: 'restated' });
    expect(countdownTaskOf({ task: restated as GenerationTask }).options).toMatchObject({
      countdownGoal: 'restated',
    });
  });

  it('refuses the markup tag on a BPE, and a model of another task', async () => {
    await expectLetheRejection(
      trainRun(
        {
          ...DEFAULT_TRAIN_SETTINGS,
          model: suiteModel,
          variant: 'ngc',
          interoception: true,
          tagTokens: 'markup',
        },
        { out: join(root, 'markup'), command: 'test' },
      ),
      'E_ARG',
      'tagTokens',
    );
    const retrieval = fileURLToPath(new URL('../../../models/retrieval', import.meta.url));
    await expectLetheRejection(
      trainRun(
        { ...DEFAULT_TRAIN_SETTINGS, model: retrieval, variant: 'ngc' },
        { out: join(root, 'retrieval'), command: 'test' },
      ),
      'E_ARG',
      'model',
    );
  });
});

/** The NGC task of the task model in `dir`, its weights released. */
async function countdownOf(dir: string): Promise<{ task: GenerationTask }> {
  const base = await loadTaskModel(dir);
  base.model.dispose();
  return { task: countdownTaskOf(base) };
}
