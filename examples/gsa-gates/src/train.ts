// Trains GSA gates on a frozen task model, e.g.
//   npm run train -- --model ../../models/retrieval-long --out runs/retrieval-long
// Rerunning the same command resumes from the checkpoints in <out>/distillation and
// <out>/language-model; the policy directory lands in <out>/policy.

import { runMain } from '@lethe/eval/node';
import { GATE_GRANULARITIES, GSA_DEFAULT_SINKS, GSA_DEFAULT_WINDOW } from '@lethe/policies-gsa';
import {
  DEFAULT_ATTENTION_WEIGHT,
  DEFAULT_GATE_WEIGHT,
  DEFAULT_RETENTION_BUDGETS,
} from '@lethe/policies-gsa/train';
import { parseTaskOptionsFlag } from '@lethe/task-models';
import { initBackend } from '@lethe/tensor';
import { Command, Option } from 'commander';
import { integer, number, numbers } from './cli-values';
import type { GateRunSettings } from './run-settings';
import { trainGates } from './train-run';

const program = new Command()
  .name('gsa-gates-train')
  .description('Train GSA gates (two stages) on a frozen task model; resumable.')
  .requiredOption('--model <dir>', 'task model (a lethe pretrain directory)')
  .option('--weights <dir>', 'train on these weights (same shape) instead of the task model’s')
  .option(
    '--task-options <json>',
    'options over the model’s task’s, e.g. one suite member at one length (default: the task as trained)',
  )
  .requiredOption('--out <dir>', 'run directory: checkpoints, policy/ and training.json')
  .addOption(
    new Option('--granularity <g>', 'gate granularity')
      .choices([...GATE_GRANULARITIES])
      .default('head'),
  )
  .option('--stage1-steps <n>', 'stage 1 (distillation) updates; 0 skips stage 1', integer, 200)
  .option('--stage2-steps <n>', 'stage 2 (LM loss through gates) updates', integer, 200)
  .option('--batch-size <n>', 'sequences per update', integer, 4)
  .option('--lr <x>', 'peak learning rate', number, 3e-3)
  .option('--warmup <n>', 'warmup updates of each stage', integer, 10)
  .option('--seed <n>', 'seed of the gate and the data', integer, 1)
  .option('--attention-weight <x>', 'λ_attn of stage 1', number, DEFAULT_ATTENTION_WEIGHT)
  .option('--gate-weight <x>', 'λ_gate of both stages', number, DEFAULT_GATE_WEIGHT)
  .addOption(
    new Option('--penalty <kind>', 'gate penalty: the reference code’s or the paper’s')
      .choices(['reference', 'entropy'])
      .default('reference'),
  )
  .option('--entropy-weight <x>', 'λ_ent of the entropy penalty', number, 1)
  .option('--init-bias <x>', 'initial final bias of the gate (gates start near σ(bias))', number, 0)
  .option('--retention-weight <x>', 'λ_ret of both stages (0: the paper’s recipe)', number, 0)
  .option(
    '--retention-budgets <list>',
    'cache sizes L_ret trains for (fractions of each sequence)',
    numbers,
    [...DEFAULT_RETENTION_BUDGETS],
  )
  .option('--retention-sinks <n>', 'sinks of the caches L_ret scores', integer, GSA_DEFAULT_SINKS)
  .option(
    '--retention-window <n>',
    'window of the caches L_ret scores',
    integer,
    GSA_DEFAULT_WINDOW,
  )
  .option(
    '--retention-observation <n>',
    'prompt rows before the answer that L_ret scores as well',
    integer,
    0,
  )
  .option(
    '--evict-budgets <list>',
    'stage 2 evicts in the loop: each sequence’s cache keeps a fraction drawn from this list (default: no eviction, the paper’s recipe)',
    numbers,
  )
  .option('--evict-sinks <n>', 'sinks of those caches', integer, GSA_DEFAULT_SINKS)
  .option('--evict-window <n>', 'window of those caches', integer, GSA_DEFAULT_WINDOW)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

await runMain(async () => {
  await initBackend('wasm');
  const settings: GateRunSettings = {
    model: o.model,
    weights: o.weights ?? null,
    ...(o.taskOptions === undefined ? {} : { taskOptions: parseTaskOptionsFlag(o.taskOptions) }),
    granularity: o.granularity,
    stage1Steps: o.stage1Steps,
    stage2Steps: o.stage2Steps,
    batchSize: o.batchSize,
    lr: o.lr,
    warmup: o.warmup,
    seed: o.seed,
    attentionWeight: o.attentionWeight,
    gateWeight: o.gateWeight,
    penalty: o.penalty,
    entropyWeight: o.entropyWeight,
    initBias: o.initBias,
    retentionWeight: o.retentionWeight,
    retentionBudgets: o.retentionBudgets,
    retentionSinks: o.retentionSinks,
    retentionWindow: o.retentionWindow,
    retentionObservationRows: o.retentionObservation,
    ...(o.evictBudgets === undefined
      ? {}
      : { eviction: { budgets: o.evictBudgets, sinks: o.evictSinks, window: o.evictWindow } }),
  };
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  const result = await trainGates(o.out, settings, {
    signal: controller.signal,
    onProgress: (p) => {
      if (p.step % 5 !== 0 && p.step !== p.totalSteps) return;
      const name = p.stage === 'distillation' ? 'L_attn' : 'L_LM';
      const retention =
        p.retentionLoss === undefined
          ? ''
          : ` | L_ret ${p.retentionLoss.toFixed(4)} | lost ${p.lostAttention!.toFixed(3)}`;
      process.stderr.write(
        `gsa ${p.stage} ${p.step}/${p.totalSteps} | ${name} ${p.taskLoss.toExponential(3)} | L_gate ${p.gateLoss.toFixed(4)}${retention} | mean g ${p.meanGate.toFixed(3)} | g<0.1 ${p.lowFraction.toFixed(3)} | g>0.9 ${p.highFraction.toFixed(3)} | ${p.elapsedSeconds.toFixed(0)}s | ETA ${p.etaSeconds.toFixed(0)}s\n`,
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
