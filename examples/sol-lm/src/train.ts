// Trains a SOL compute controller on a frozen task model, e.g.
//   npm run train -- --model ../../models/lm --out runs/lm-2l --actions 2L
//   npm run train -- --model ../../models/countdown --weights ../../models/countdown-rl --out runs/cd-c10 --actions C-10
// Rerunning the same command resumes from <out>/checkpoint; the policy directory lands in
// <out>/policy.

import { LetheError } from '@lethe/core';
import { parseIntegerFlag, parseNumberFlag } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { DEFAULT_PENALTY_WEIGHTS } from '@lethe/policies-sol';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { ACTION_SET_NAMES } from './action-sets';
import { DEFAULT_ANSWERS, DEFAULT_PREFIX, type SolRunSettings } from './run-settings';
import { trainSol } from './train-run';

const int = (flag: string, min: number) => (text: string) => parseIntegerFlag(text, flag, min);

/** `--prefix`: an integer, or `min-max`. */
function prefixFlag(text: string): number | { min: number; max: number } {
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (range === null) return parseIntegerFlag(text, '--prefix', 1);
  return {
    min: parseIntegerFlag(range[1]!, '--prefix', 1),
    max: parseIntegerFlag(range[2]!, '--prefix', 1),
  };
}

const program = new Command()
  .name('sol-lm-train')
  .description('Train a SOL controller (GRPO, teacher-forced counterfactual schedules); resumable.')
  .requiredOption(
    '--model <dir>',
    'task model (a lethe pretrain directory): the lm task, or a generation task (Countdown, retrieval)',
  )
  .option('--weights <dir>', 'train on these weights (same shape) instead of the task model’s')
  .requiredOption('--out <dir>', 'run directory: checkpoint/, policy/ and training.json')
  .option('--actions <name>', `action set: ${ACTION_SET_NAMES.join(', ')}`, '2L')
  .option('--horizon <n>', 'episode length T', int('--horizon', 1), 16)
  .option(
    '--prefix <n>',
    `language modelling: tokens prefilled densely before each episode, or a range min-max drawn from per input (default ${DEFAULT_PREFIX})`,
    prefixFlag,
  )
  .option(
    '--answers <n>',
    `generation tasks: training prompts the frozen model answers, whose answers the episodes run over (default ${DEFAULT_ANSWERS})`,
    int('--answers', 1),
  )
  .option('--batch-size <n>', 'inputs per update B', int('--batch-size', 1), 8)
  .option('--group-size <n>', 'schedules per input K', int('--group-size', 2), 16)
  .option('--updates <n>', 'GRPO updates', int('--updates', 1), 200)
  .option('--lr <x>', 'AdamW learning rate', (text) => parseNumberFlag(text, '--lr'), 1e-3)
  .option('--width <n>', 'controller width', int('--width', 4), 64)
  .option(
    '--penalty-weights <list>',
    'α_κ,α_ρ,α_η of the budget penalty',
    (text) => text.split(',').map((t) => parseNumberFlag(t, '--penalty-weights')),
    [...DEFAULT_PENALTY_WEIGHTS],
  )
  .option('--seed <n>', 'seed of the controller and of every draw', int('--seed', 0), 1)
  .option(
    '--redis <url>',
    'run each update’s schedules as jobs on this Redis server for `lethe worker` processes started in this directory (the same results)',
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

function penaltyWeights(values: number[]): [number, number, number] {
  if (values.length !== 3) {
    throw new LetheError(
      'E_ARG',
      `must be three weights, got ${values.length}`,
      '--penalty-weights',
    );
  }
  return [values[0]!, values[1]!, values[2]!];
}

await runMain(async () => {
  await initBackend('wasm');
  const settings: SolRunSettings = {
    model: o.model,
    ...(o.weights === undefined ? {} : { weights: o.weights }),
    actions: o.actions,
    horizon: o.horizon,
    ...(o.prefix === undefined ? {} : { prefix: o.prefix }),
    ...(o.answers === undefined ? {} : { answers: o.answers }),
    batchSize: o.batchSize,
    groupSize: o.groupSize,
    updates: o.updates,
    lr: o.lr,
    penaltyWeights: penaltyWeights(o.penaltyWeights),
    width: o.width,
    seed: o.seed,
  };
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  const fixed = (values: readonly number[] | undefined) =>
    values === undefined ? '-' : values.map((v) => v.toFixed(3)).join('/');
  const result = await trainSol(o.out, settings, {
    signal: controller.signal,
    onDocuments: (summary) => process.stderr.write(`documents: ${summary}\n`),
    ...(o.redis === undefined ? {} : { redis: o.redis }),
    onRefused: (message) => process.stderr.write(`\nwarning: ${message}\n`),
    onProgress: (p) => {
      process.stderr.write(
        `sol ${p.step}/${p.totalUpdates} | reward ${p.reward.toFixed(4)} | penalty ${p.penalty.toFixed(4)} | realised ${fixed(p.realised)} vs target ${fixed(p.targets)} | entropy ${p.entropy.toFixed(3)} | ${p.seconds.toFixed(1)}s | ETA ${p.etaSeconds.toFixed(0)}s\n`,
      );
    },
  });
  if (result.stopped) {
    process.stderr.write('stopped: rerun the same command to resume\n');
    process.exitCode = 130;
    return;
  }
  process.stdout.write(`${result.policyDir}\n`);
});
