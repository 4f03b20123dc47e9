// Measures what NGC's eviction term adds to an update: on one batch of sampled rollouts per rate,
// the norms of ∇L_token and ∇L_mem (eq. 3 and 4) apart, e.g.
//   npm run gradient-split -- --run results/runs/suite-ngc-b24-g16 --weights task --rates 0.2,0.5
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { runMain } from '@lethe/eval/node';
import type { DecoderModel } from '@lethe/model';
import { collectRollouts, lossGradients, sampleGroupBatch } from '@lethe/policies-ngc/train';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command, Option } from 'commander';
import { integer, positiveInteger, rates } from './cli-args';
import { countdownNgcTask } from './countdown-ngc-task';
import { countdownTaskOf } from './countdown-task';
import { loadRunStart } from './init-from-run';
import { NGC_RUN_FILE } from './run-file';
import type { TrainSettings } from './train-settings';

const o = new Command()
  .name('ngc-countdown-gradient-split')
  .requiredOption('--run <dir>', 'a finished run: its settings, and its weights with --weights run')
  .addOption(
    new Option('--weights <which>', "the run's trained weights, or its task model's (before RL)")
      .choices(['run', 'task'])
      .default('run'),
  )
  .option('--rates <list>', 'eviction rates ε, one batch each', rates, [0.2, 0.3, 0.5])
  .option(
    '--step <n>',
    "training step whose prompts to use (default: the run's last + 1, prompts it never saw)",
    integer,
  )
  .option('--micro-batch <n>', 'rollouts per replay forward', positiveInteger, 4)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{
    run: string;
    weights: 'run' | 'task';
    rates: number[];
    step?: number;
    microBatch: number;
  }>();

await runMain(async () => {
  await initBackend('wasm');
  let settings: TrainSettings;
  try {
    settings = JSON.parse(await readFile(join(o.run, NGC_RUN_FILE), 'utf8')).settings;
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `is not a finished NGC run: ${(error as Error).message}`,
      '--run',
    );
  }
  if (o.weights === 'task' && settings.interoception) {
    throw new LetheError(
      'E_ARG',
      'the task model has no tag tokens; use --weights run',
      '--weights',
    );
  }
  const base = await loadTaskModel(settings.model);
  let model: DecoderModel = base.model;
  try {
    const start = o.weights === 'run' ? await loadRunStart(o.run, base, settings) : undefined;
    if (start !== undefined) {
      base.model.dispose();
      model = start.model;
    }
    const task = countdownNgcTask(
      countdownTaskOf(base),
      settings.seed,
      settings.promptsPerStep,
      settings.interoception ? start?.tokenizer : undefined,
    );
    const step = o.step ?? settings.steps;
    const { promptsPerStep: prompts, groupSize } = settings;
    console.log(
      `${o.weights === 'run' ? o.run : `${settings.model} (before RL)`}, step ${step}'s ${prompts} prompts × ${groupSize} rollouts per rate`,
    );
    console.log('| ε | reward | ‖∇L_token‖ | ‖∇L_mem‖ | ‖∇L_mem‖ / ‖∇L_token‖ | cosine | ‖∇L‖ |');
    console.log('|--:|--:|--:|--:|--:|--:|--:|');
    for (const rate of o.rates) {
      const { rollouts, shaped, advantages } = await sampleGroupBatch(
        task,
        step,
        rate,
        settings,
        (requests) =>
          collectRollouts(requests, {
            model,
            ngc: {
              cadence: settings.cadence,
              blockSize: settings.blockSize,
              window: settings.window,
              logits: settings.logits,
            },
            maxNewTokens: settings.maxNewTokens,
            temperature: settings.temperature,
            stop: task.stop,
            seed: settings.seed,
          }),
      );
      const split = lossGradients(model, rollouts, advantages, {
        temperature: settings.temperature,
        logits: settings.logits,
        microBatch: o.microBatch,
      });
      const reward = shaped.reduce((sum, x) => sum + x, 0) / shaped.length;
      console.log(
        `| ${rate} | ${reward.toFixed(3)} | ${split.tokenNorm.toFixed(3)} | ${split.memoryNorm.toFixed(3)} | ${(split.memoryNorm / split.tokenNorm).toFixed(3)} | ${split.cosine.toFixed(3)} | ${split.totalNorm.toFixed(3)} |`,
      );
    }
  } finally {
    model.dispose();
  }
});
