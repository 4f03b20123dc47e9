// Measures how NGC's block size b and scoring window w shape its policy on the Countdown model
// before RL: greedy accuracy, eq. 7 peak reduction and how often a round evicts the newest block.
// ψ averages over all w window queries, and a key newer than a query gets 0 from it, so with
// w > b the newest block is under-scored. E.g.
//   pnpm --filter @lethe/example-ngc-countdown window-choice --rates 0.2,0.5
import { runMain } from '@lethe/eval/node';
import { isNgcDecision, NgcPolicy } from '@lethe/policies-ngc';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { blockWindowPairs, integer, positiveInteger, rates } from './cli-args';
import { countdownTaskOf } from './countdown-task';
import { evaluateMethod } from './evaluate-method';
import { summarize } from './summarize';
import { DEFAULT_TRAIN_SETTINGS as D } from './train-settings';

const o = new Command()
  .name('ngc-countdown-window-choice')
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
  .option('--rates <list>', 'eviction rates ε', rates, [0.2, 0.5])
  .option('--cadence <n>', 'eviction cadence δ', positiveInteger, D.cadence)
  .option(
    '--pairs <list>',
    'block size : window pairs',
    blockWindowPairs,
    blockWindowPairs('2:5,2:2,2:1,4:4,4:1'),
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{
    model: string;
    examples: number;
    evalSeed: number;
    rates: number[];
    cadence: number;
    pairs: { blockSize: number; window: number }[];
  }>();

await runMain(async () => {
  await initBackend('wasm');
  const base = await loadTaskModel(o.model);
  const task = countdownTaskOf(base);
  const examples = Array.from({ length: o.examples }, (_, i) => task.example(o.evalSeed, i));
  const run = (policy: () => NgcPolicy | undefined, onRound?: (newestEvicted: boolean) => void) =>
    evaluateMethod({
      model: base.model,
      task,
      examples,
      batchSize: 64,
      policy,
      onEvictionRound: ({ decision }) => {
        if (isNgcDecision(decision)) onRound?.(!decision.order.includes(decision.blocks - 1));
      },
    });
  const full = await run(() => undefined);
  console.log(`full cache: ${(100 * summarize(full, full).accuracy).toFixed(1)}%`);
  console.log('| ε | b | w | accuracy | peak reduction | rounds evicting the newest block |');
  console.log('|--:|--:|--:|--:|--:|--:|');
  for (const rate of o.rates) {
    for (const { blockSize, window } of o.pairs) {
      let rounds = 0;
      let newestEvicted = 0;
      const outcomes = await run(
        () =>
          new NgcPolicy({
            evictionRate: rate,
            cadence: o.cadence,
            blockSize,
            window,
            mode: 'greedy',
          }),
        (evicted) => {
          rounds++;
          if (evicted) newestEvicted++;
        },
      );
      const s = summarize(outcomes, full);
      console.log(
        `| ${rate} | ${blockSize} | ${window} | ${(100 * s.accuracy).toFixed(1)}% | ${s.peakReduction.toFixed(2)}× | ${((100 * newestEvicted) / rounds).toFixed(0)}% |`,
      );
    }
  }
  base.model.dispose();
});
