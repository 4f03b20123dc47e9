// Trains the Countdown model with NGC or one of the paper's ablations, e.g.
//   pnpm --filter @lethe/example-ngc-countdown train --variant ngc --out runs/ngc
// Rerunning the same command resumes from runs/ngc.state/.

import { LetheError } from '@lethe/core';
import type { NgcLogits } from '@lethe/policies-ngc';
import type { NgcVariant } from '@lethe/policies-ngc/train';
import { initBackend } from '@lethe/tensor';
import { Command, Option } from 'commander';
import { integer, number, numbers } from './cli-args';
import { trainingBar } from './progress-bar';
import { trainRun } from './train-run';
import { DEFAULT_TRAIN_SETTINGS as D, type TrainSettings } from './train-settings';

const program = new Command()
  .name('ngc-countdown-train')
  .description('RL-train the Countdown task model with NGC (or an ablation) and save it.')
  .addOption(
    new Option('--variant <name>', 'objective')
      .choices(['ngc', 'token-only', 'dropout', 'no-evict'])
      .makeOptionMandatory(),
  )
  .requiredOption('--out <dir>', 'output model directory (state in <dir>.state/)')
  .option('--model <dir>', 'starting task model', '../../models/countdown')
  .option('--init <run>', 'start from the weights of a finished run of --model (to continue it)')
  .option('--steps <n>', 'updates', integer, D.steps)
  .option('--prompts <n>', 'prompts per update', integer, D.promptsPerStep)
  .option('--group <n>', 'rollouts per prompt G', integer, D.groupSize)
  .option('--retention <list>', 'curriculum retention rates', numbers, [...D.retention])
  .option('--stage-steps <n>', 'updates per curriculum stage', integer, D.stageSteps)
  .option('--blend <a>', 'curriculum blend fraction α', number, D.blend)
  .option('--cadence <n>', 'eviction cadence δ', integer, D.cadence)
  .option('--block <n>', 'block size b', integer, D.blockSize)
  .option('--window <n>', 'scoring window w', integer, D.window)
  .addOption(
    new Option('--logits <kind>', 'score-to-logit map')
      .choices(['log', 'score', 'scaled'])
      .default(D.logits.kind),
  )
  .option(
    '--logit-temperature <t>',
    'τ of the log / scaled maps',
    number,
    D.logits.kind === 'score' ? 1 : D.logits.temperature,
  )
  .option('--temperature <t>', 'sampling temperature', number, D.temperature)
  .option('--max-new-tokens <n>', 'tokens per rollout', integer, D.maxNewTokens)
  .option('--lr <x>', 'constant learning rate', number, D.lr)
  .option('--beta1 <x>', 'AdamW β1', number, D.beta1)
  .option('--beta2 <x>', 'AdamW β2', number, D.beta2)
  .option('--adam-epsilon <x>', 'AdamW ε', number, D.adamEpsilon)
  .option('--weight-decay <x>', 'AdamW weight decay', number, D.weightDecay)
  .option('--clip <x>', 'gradient-norm bound', number, D.clipNorm)
  .option('--micro-batch <n>', 'rollouts per replay forward', integer, D.microBatch)
  .option('--no-min-length-penalty', 'keep the reward of rollouts shorter than δ')
  .option(
    '--interoception',
    'append <eviction_rate>p%</eviction_rate> to every prompt (§5.3)',
    false,
  )
  .option(
    '--sft-warmup <n>',
    'supervised updates before RL (on tagged prompts with --interoception)',
    integer,
    D.sftWarmupSteps,
  )
  .addOption(
    new Option('--tag-tokens <kind>', 'how the interoception tag is tokenized')
      .choices(['characters', 'markup'])
      .default(D.tagTokens),
  )
  .option('--seed <n>', 'seed', integer, D.seed)
  .option('--checkpoint-every <n>', 'updates between checkpoints', integer, D.checkpointEvery)
  .option('--threads <n>', 'rollout worker threads (1: in this thread)', integer, 1)
  .option(
    '--redis <url>',
    'generate the rollouts as jobs on this Redis server for `lethe worker` processes started in this directory (the same results)',
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();
if (o.tagTokens !== D.tagTokens && !o.interoception) {
  program.error('error: --tag-tokens only applies with --interoception');
}
const logits: NgcLogits =
  o.logits === 'score' ? { kind: 'score' } : { kind: o.logits, temperature: o.logitTemperature };
const settings: TrainSettings = {
  model: o.model,
  ...(o.init === undefined ? {} : { init: o.init }),
  variant: o.variant as NgcVariant,
  steps: o.steps,
  promptsPerStep: o.prompts,
  groupSize: o.group,
  retention: o.retention,
  stageSteps: o.stageSteps,
  blend: o.blend,
  cadence: o.cadence,
  blockSize: o.block,
  window: o.window,
  logits,
  temperature: o.temperature,
  maxNewTokens: o.maxNewTokens,
  lr: o.lr,
  beta1: o.beta1,
  beta2: o.beta2,
  adamEpsilon: o.adamEpsilon,
  weightDecay: o.weightDecay,
  clipNorm: o.clip,
  microBatch: o.microBatch,
  minLengthPenalty: o.minLengthPenalty,
  interoception: o.interoception,
  tagTokens: o.tagTokens,
  sftWarmupSteps: o.sftWarmup,
  seed: o.seed,
  checkpointEvery: o.checkpointEvery,
};

await initBackend('wasm');
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
const bar = trainingBar(settings.steps);
try {
  const result = await trainRun(settings, {
    out: o.out,
    command: process.argv.slice(2).join(' '),
    threads: o.threads,
    ...(o.redis === undefined ? {} : { redis: o.redis }),
    onProgress: bar.update,
    onWarmupProgress: (step, loss) => {
      if (step % 25 === 0 || step === settings.sftWarmupSteps) {
        console.error(`warm-up ${step}/${settings.sftWarmupSteps} | loss ${loss.toFixed(4)}`);
      }
    },
    signal: controller.signal,
  });
  bar.stop();
  const last = result.history.at(-1);
  console.log(
    result.stopped
      ? `stopped at step ${result.step}; rerun the same command to resume`
      : `saved ${o.out} after ${result.step} steps (last reward ${last?.reward.toFixed(3)}, ε ${last?.evictionRate.toFixed(2)})`,
  );
} catch (error) {
  bar.stop();
  if (error instanceof LetheError) {
    console.error(`error: ${error.message}${error.argument ? ` (${error.argument})` : ''}`);
    process.exit(2);
  }
  throw error;
}
