// Measures how each score-to-logit map of NGC behaves on the Countdown model before RL (the
// policy every rollout of training starts from), e.g.
//   pnpm --filter @lethe/example-ngc-countdown logits-choice --examples 128
import { runMain } from '@lethe/eval/node';
import { isNgcDecision, type NgcLogits, NgcPolicy } from '@lethe/policies-ngc';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { integer, positiveInteger, rate } from './cli-args';
import { countdownTaskOf } from './countdown-task';
import { evaluateMethod } from './evaluate-method';
import { DEFAULT_TRAIN_SETTINGS as D } from './train-settings';

const o = new Command()
  .name('ngc-countdown-logits-choice')
  .option(
    '--model <dir>',
    'task model: Countdown, or the suite (its verbose Countdown)',
    '../../models/countdown',
  )
  .option('--examples <n>', 'held-out problems', positiveInteger, 128)
  .option(
    '--eval-seed <n>',
    'task seed of the problems (1: a validation set, kept out of training and of the test set 0)',
    integer,
    0,
  )
  .option('--rate <x>', 'eviction rate ε', rate, 0.5)
  .option('--block <n>', 'block size b', positiveInteger, D.blockSize)
  .option('--window <n>', 'scoring window w', positiveInteger, D.window)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{
    model: string;
    examples: number;
    evalSeed: number;
    rate: number;
    block: number;
    window: number;
  }>();

const CHOICES: { label: string; logits: NgcLogits; mode: 'greedy' | 'sample' }[] = [
  { label: 'greedy (any map)', logits: { kind: 'log', temperature: 1 }, mode: 'greedy' },
  { label: "sample, 'score' (s)", logits: { kind: 'score' }, mode: 'sample' },
  { label: "sample, 'log' τ = 2", logits: { kind: 'log', temperature: 2 }, mode: 'sample' },
  { label: "sample, 'log' τ = 1", logits: { kind: 'log', temperature: 1 }, mode: 'sample' },
  { label: "sample, 'log' τ = 0.5", logits: { kind: 'log', temperature: 0.5 }, mode: 'sample' },
  { label: "sample, 'log' τ = 0.25", logits: { kind: 'log', temperature: 0.25 }, mode: 'sample' },
];

await runMain(async () => {
  await initBackend('wasm');
  const base = await loadTaskModel(o.model);
  const task = countdownTaskOf(base);
  const examples = Array.from({ length: o.examples }, (_, i) => task.example(o.evalSeed, i));
  console.log(
    `| choice | accuracy | first-draw entropy / log N | kept blocks in greedy top-K | mean log p(σ) |`,
  );
  console.log('|---|--:|--:|--:|--:|');
  for (const choice of CHOICES) {
    let rounds = 0;
    let entropy = 0;
    let agreement = 0;
    let logProb = 0;
    const outcomes = await evaluateMethod({
      model: base.model,
      task,
      examples,
      batchSize: 64,
      policy: () =>
        new NgcPolicy({
          evictionRate: o.rate,
          cadence: D.cadence,
          blockSize: o.block,
          window: o.window,
          logits: choice.logits,
          mode: choice.mode,
        }),
      onEvictionRound: ({ decision }) => {
        if (!isNgcDecision(decision) || decision.blocks < 2) return;
        const { logits, order, blocks } = decision;
        const max = Math.max(...logits);
        const weights = Array.from(logits, (x) => Math.exp(x - max));
        const total = weights.reduce((a, b) => a + b, 0);
        entropy -=
          weights.reduce((h, w) => (w > 0 ? h + (w / total) * Math.log(w / total) : h), 0) /
          Math.log(blocks);
        const top = new Set(
          Array.from(logits.keys())
            .sort((a, b) => logits[b]! - logits[a]! || a - b)
            .slice(0, order.length),
        );
        agreement += order.length === 0 ? 1 : order.filter((b) => top.has(b)).length / order.length;
        logProb += decision.logProb;
        rounds++;
      },
    });
    const accuracy = outcomes.filter((x) => x.correct).length / outcomes.length;
    console.log(
      `| ${choice.label} | ${(100 * accuracy).toFixed(1)}% | ${(entropy / rounds).toFixed(3)} | ${((100 * agreement) / rounds).toFixed(1)}% | ${(logProb / rounds).toFixed(2)} |`,
    );
  }
  base.model.dispose();
});
