// Evaluates trained models on held-out Countdown problems through the `@lethe/eval` harness, e.g.
//   npm run evaluate -- --baseline runs/no-evict --run ngc=runs/ngc --run token-only=runs/token-only
// Writes one harness results file per model the full cache runs on (`<out>/no-evict.json`,
// `<out>/sft.json`); rerunning the same command resumes (finished cells are kept).
// Every input is checked before any cell runs: --base must be a task model, --baseline a model
// directory of the same task, every --run a finished training run of this evaluation's cadence
// with its weights; bad input is one coded line (`error: [E_…] --flag (…): …`) and exit 2.
import { join } from 'node:path';
import { LetheError, withArgument } from '@lethe/core';
import type { GenerationTask, JsonValue } from '@lethe/eval';
import { checkpointModels, runMain, runSweep } from '@lethe/eval/node';
import { readModelDirectory } from '@lethe/model/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { integer, labelledDirectory, labelsOrNone, positiveInteger, rates } from './cli-args';
import { countdownTaskOf } from './countdown-task';
import { evaluationSweeps } from './eval-sweeps';
import { prepareRunForEvaluation } from './run-policy';
import { DEFAULT_TRAIN_SETTINGS as D } from './train-settings';

const program = new Command()
  .name('ngc-countdown-evaluate')
  .description('Accuracy and peak KV reduction of NGC, its ablations and heuristics on Countdown.')
  .requiredOption('--baseline <dir>', 'full-cache RL model (no-evict): heuristics and upper bound')
  .option('--run <label=dir>', 'NGC-family model evaluated with greedy NGC', labelledDirectory, [])
  .option('--base <dir>', 'the SFT task model (full cache, for context)', '../../models/countdown')
  .option(
    '--heuristics-on <labels>',
    'models the heuristics run on (sft, no-evict), or none',
    labelsOrNone,
    ['no-evict'],
  )
  .option('--rates <list>', 'eviction rates ε per round', rates, [0.1, 0.2, 0.3, 0.4, 0.5])
  .option(
    '--cadence <n>',
    'tokens between eviction rounds δ (every --run trained with it)',
    positiveInteger,
    D.cadence,
  )
  .option('--examples <n>', 'held-out problems', positiveInteger, 256)
  .option('--eval-seed <n>', 'task seed of the held-out problems', integer, 0)
  .option('--batch-size <n>', 'sequences per generate call', positiveInteger, 64)
  .option('--out <dir>', 'results directory (one harness results file per model)', 'out/ngc-eval')
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const o = program.opts<{
  baseline: string;
  run: [string, string][];
  base: string;
  heuristicsOn: string[];
  rates: number[];
  cadence: number;
  examples: number;
  evalSeed: number;
  batchSize: number;
  out: string;
}>();

/** Runs `check`; a `LetheError` it throws is re-issued naming `flag` (and what it named). */
async function asFlag<T>(flag: string, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof LetheError) || error.argument === flag) throw error;
    throw withArgument(error, error.argument === undefined ? flag : `${flag} (${error.argument})`);
  }
}

/**
 * Checks every input before any work, and returns the task the models are for: --base is a task
 * model, --baseline a model directory of its task (as the harness will load it), every --run a
 * model directory and a finished run of this cadence (`prepareRunForEvaluation`, which gives a
 * run predating `policy.json` its own).
 */
async function checkInputs(): Promise<GenerationTask> {
  for (const label of o.heuristicsOn) {
    if (label !== 'no-evict' && label !== 'sft') {
      throw new LetheError(
        'E_ARG',
        `names "${label}"; the heuristics run on sft or no-evict (or none: --heuristics-on none)`,
        '--heuristics-on',
      );
    }
  }
  const task = await asFlag('--base', async () => {
    const base = await loadTaskModel(o.base);
    base.model.dispose();
    try {
      return countdownTaskOf(base);
    } catch (error) {
      throw error instanceof LetheError ? withArgument(error, '--base') : error;
    }
  });
  await asFlag('--baseline', async () => {
    const models = checkpointModels({ [task.name]: o.baseline });
    models.release?.(task.name, await models.load(task.name));
  });
  for (const [label, dir] of o.run) {
    await asFlag(`--run ${label}`, async () => {
      (await readModelDirectory(dir, { tokenizer: 'optional' })).model.dispose();
    });
  }
  // Only runs with their weights get here: a run predating `policy.json` is given its own.
  for (const [label, dir] of o.run) {
    if (await prepareRunForEvaluation(label, dir, o.cadence)) {
      console.error(`wrote ${join(dir, 'policy.json')} from the settings of ${dir}`);
    }
  }
  return task;
}

async function main(): Promise<void> {
  await initBackend('wasm');
  const task = await checkInputs();
  const sweeps = evaluationSweeps({
    task: { name: task.name, options: task.options as Record<string, JsonValue> },
    baseline: o.baseline,
    base: o.base,
    runs: o.run,
    heuristicsOn: o.heuristicsOn as ('no-evict' | 'sft')[],
    rates: o.rates,
    cadence: o.cadence,
    examples: o.examples,
    evalSeed: o.evalSeed,
    batchSize: o.batchSize,
  });
  for (const { model, config } of sweeps) {
    const resultsPath = join(o.out, `${model}.json`);
    await runSweep(config, {
      resultsPath,
      onProgress: ({ index, total, key, skipped, etaMs }) =>
        console.error(
          `${model}: cell ${index + 1}/${total} ${key.policy} budget ${key.budget}${skipped ? ' (done before)' : ''}${etaMs === undefined ? '' : ` | ETA ${Math.round(etaMs / 1000)} s`}`,
        ),
    });
    console.log(`${model}: ${resultsPath}`);
  }
}

await runMain(main);
