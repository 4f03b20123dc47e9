// Evaluates trained models on held-out Countdown problems through the `@lethe/eval` harness, e.g.
//   npm run evaluate -- --baseline runs/no-evict --run ngc=runs/ngc --run token-only=runs/token-only
// Writes one harness results file per model the full cache runs on (`<out>/no-evict.json`,
// `<out>/sft.json`); rerunning the same command resumes (finished cells are kept).
import { join } from 'node:path';
import type { GenerationTask, JsonValue } from '@lethe/eval';
import { loadTaskModel, runSweep } from '@lethe/eval/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { integer, labelledDirectory, labels, positiveInteger, rates } from './cli-args';
import { evaluationSweeps } from './eval-sweeps';
import { prepareRunForEvaluation } from './run-policy';
import { DEFAULT_TRAIN_SETTINGS as D } from './train-settings';

const program = new Command()
  .name('ngc-countdown-evaluate')
  .description('Accuracy and peak KV reduction of NGC, its ablations and heuristics on Countdown.')
  .requiredOption('--baseline <dir>', 'full-cache RL model (no-evict): heuristics and upper bound')
  .option('--run <label=dir>', 'NGC-family model evaluated with greedy NGC', labelledDirectory, [])
  .option('--base <dir>', 'the SFT task model (full cache, for context)', '../../models/countdown')
  .option('--heuristics-on <labels>', 'models the heuristics run on (sft, no-evict)', labels, [
    'no-evict',
  ])
  .option('--rates <list>', 'eviction rates ε per round', rates, [0.1, 0.2, 0.3, 0.4, 0.5])
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
  examples: number;
  evalSeed: number;
  batchSize: number;
  out: string;
}>();

for (const label of o.heuristicsOn) {
  if (label !== 'no-evict' && label !== 'sft') {
    program.error(`error: --heuristics-on names "${label}"; the heuristics run on sft or no-evict`);
  }
}
for (const [label, dir] of o.run) {
  if (await prepareRunForEvaluation(label, dir, D.cadence)) {
    console.error(`wrote ${join(dir, 'policy.json')} from the settings of ${dir}`);
  }
}

await initBackend('wasm');
const base = await loadTaskModel(o.base);
base.model.dispose();
const task = base.task as GenerationTask;
const sweeps = evaluationSweeps({
  task: { name: task.name, options: task.options as Record<string, JsonValue> },
  baseline: o.baseline,
  base: o.base,
  runs: o.run,
  heuristicsOn: o.heuristicsOn as ('no-evict' | 'sft')[],
  rates: o.rates,
  cadence: D.cadence,
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
