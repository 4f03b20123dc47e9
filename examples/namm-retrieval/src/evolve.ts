// Evolves a NAMM with CMA-ES on a task model, e.g.
//   npm run evolve -- --model ../../models/retrieval --out runs/retrieval
// Rerunning the same command resumes from <out>/checkpoint.json.

import { LetheError } from '@lethe/core';
import { runMain } from '@lethe/eval/node';
import { NAMM_DEFAULT_UPDATE_INTERVAL } from '@lethe/policies-namm';
import { DEFAULT_NAMM_POPULATION, DEFAULT_NAMM_SIGMA0 } from '@lethe/policies-namm/train';
import { parseTaskOptionsFlag } from '@lethe/task-models';
import { initBackend } from '@lethe/tensor';
import { Command, Option } from 'commander';
import { integer, number } from './cli-values';
import { type ExtraTask, evolveRun } from './evolve-run';
import { evolutionBar } from './progress-bar';

/**
 * `label=json`: a variant of the run's task (its options over the run's task's).
 *
 * @throws LetheError `E_ARG` naming `--extra-task` without a label or with options that are not
 *   a JSON object.
 */
function extraTask(value: string): ExtraTask {
  const at = value.indexOf('=');
  if (at < 1) {
    throw new LetheError(
      'E_ARG',
      `must be label=JSON options, e.g. short={"contextChars":512}, got ${JSON.stringify(value)}`,
      '--extra-task',
    );
  }
  return {
    label: value.slice(0, at),
    options: parseTaskOptionsFlag(value.slice(at + 1), '--extra-task'),
  };
}

const program = new Command()
  .name('namm-retrieval-evolve')
  .description('Evolve a NAMM with CMA-ES on a frozen task model; resumable.')
  .requiredOption('--model <dir>', 'task model (a lethe pretrain directory)')
  .requiredOption('--out <dir>', 'run directory: checkpoint.json and the policy directory')
  .option('--generations <n>', 'CMA-ES generations', integer, 30)
  .option('--population <n>', 'CMA-ES population λ', integer, DEFAULT_NAMM_POPULATION)
  .option('--prompts <n>', 'prompts per generation', integer, 8)
  .option('--sigma0 <x>', 'initial step size', number, DEFAULT_NAMM_SIGMA0)
  .option('--seed <n>', 'CMA-ES seed', integer, 0)
  .option(
    '--update-interval <n>',
    'n_up, tokens between rounds',
    integer,
    NAMM_DEFAULT_UPDATE_INTERVAL,
  )
  .option('--capacity <n>', 'most entries per KV head besides the threshold', integer)
  .addOption(
    new Option(
      '--covariance <model>',
      'CMA-ES covariance: full (the paper) or diagonal (separable)',
    )
      .choices(['full', 'diagonal'])
      .default('full'),
  )
  .addOption(
    new Option('--scorer <kind>', 'scoring network').choices(['bam', 'mlp']).default('bam'),
  )
  .addOption(
    new Option('--features <set>', 'features scored')
      .choices(['spectrogram', 'age'])
      .default('spectrogram'),
  )
  .option(
    '--task-options <json>',
    "options over the model's task's, e.g. one suite member at one length",
  )
  .option('--threads <n>', 'worker threads (1: in this thread)', integer, 1)
  .option(
    '--redis <url>',
    'evaluate each generation as jobs on this Redis server for `lethe worker` processes (the same results)',
  )
  .option(
    '--extra-task <label=json>',
    "evolve on a variant of the model's task too (repeatable)",
    (value: string, previous: string[]) => [...previous, value],
    [] as string[],
  )
  .option(
    '--incremental',
    'one stage per task, adding them in order (the paper’s incremental runs)',
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

await runMain(async () => {
  const taskOptions = o.taskOptions === undefined ? undefined : parseTaskOptionsFlag(o.taskOptions);
  const extraTasks = (o.extraTask as string[]).map(extraTask);
  await initBackend('wasm');
  const bar = evolutionBar(o.generations);
  try {
    const history = await evolveRun(
      {
        model: o.model,
        out: o.out,
        generations: o.generations,
        population: o.population,
        covariance: o.covariance,
        promptsPerTask: o.prompts,
        sigma0: o.sigma0,
        seed: o.seed,
        updateInterval: o.updateInterval,
        capacity: o.capacity,
        scorer: o.scorer,
        features: o.features,
        threads: o.threads,
        ...(o.redis === undefined ? {} : { redis: o.redis }),
        taskOptions,
        extraTasks,
        incremental: o.incremental ?? false,
      },
      bar.update,
    );
    bar.stop();
    const last = history.at(-1);
    if (last !== undefined) {
      console.log(
        `generation ${last.generation}: mean's fitness ${last.meanFitness.toFixed(3)} at cache ${last.meanCacheSize.toFixed(3)}; policy in ${o.out}`,
      );
    }
  } finally {
    bar.stop();
  }
});
