// What selection alone can reach at a rate: every model evaluated with the task-aware
// PromptOraclePolicy (it keeps the numbers and the target, then the newest entries) at the same
// rounds and fraction as the comparison's heuristics, next to its full cache. E.g.
//   pnpm --filter @lethe/example-ngc-countdown oracle-check --model no-evict=runs/no-evict \
//     --model ngc=runs/ngc --rates 0.3,0.4,0.5
import type { GenerationTask } from '@lethe/eval';
import { encodeText } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { readModelDirectory } from '@lethe/model/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { labelledDirectory, positiveInteger, rates } from './cli-args';
import { evaluateMethod } from './evaluate-method';
import { percent } from './percent';
import { PromptOraclePolicy, problemPositions } from './prompt-oracle';
import { summarize } from './summarize';
import { DEFAULT_TRAIN_SETTINGS as D } from './train-settings';

const program = new Command()
  .name('ngc-countdown-oracle-check')
  .description('Accuracy of the task-aware prompt oracle (a diagnostic) on trained models.')
  .option('--base <dir>', 'the SFT task model (task and tokenizer)', '../../models/countdown')
  .option(
    '--model <label=dir>',
    'model to evaluate (default: the SFT model)',
    labelledDirectory,
    [],
  )
  .option('--examples <n>', 'held-out problems', positiveInteger, 256)
  .option('--rates <list>', 'eviction rates ε', rates, [0.3, 0.4, 0.5])
  .option('--cadence <n>', 'eviction cadence δ', positiveInteger, D.cadence)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const o = program.opts<{
  base: string;
  model: [string, string][];
  examples: number;
  rates: number[];
  cadence: number;
}>();

await runMain(async () => {
  await initBackend('wasm');
  const base = await loadTaskModel(o.base);
  const task = base.task as GenerationTask;
  const examples = Array.from({ length: o.examples }, (_, i) => task.example(0, i));
  const models = o.model.length === 0 ? [['sft', o.base] as [string, string]] : o.model;
  console.log('| model | full cache | ε | prompt oracle | peak reduction |');
  console.log('|---|--:|--:|--:|--:|');
  for (const [label, dir] of models) {
    const { model, tokenizer } = dir === o.base ? base : await readModelDirectory(dir);
    if (tokenizer?.vocabSize !== task.tokenizer.vocabSize) {
      program.error(
        `error: --model ${label}: its tokenizer is not the task's (an interoception run?)`,
      );
    }
    const full = await evaluateMethod({
      model,
      task,
      examples,
      batchSize: 64,
      policy: () => undefined,
    });
    const fullAccuracy = summarize(full, full).accuracy;
    for (const rate of o.rates) {
      const outcomes = await evaluateMethod({
        model,
        task,
        examples,
        // One sequence per call: the oracle knows its prompt.
        batchSize: 1,
        policy: ([example]) =>
          new PromptOraclePolicy(
            problemPositions(example!.prompt, encodeText(task.tokenizer, example!.prompt).length),
            rate,
            o.cadence,
          ),
      });
      const s = summarize(outcomes, full);
      console.log(
        `| ${label} | ${percent(fullAccuracy)} | ${rate} | ${percent(s.accuracy)} ± ${(100 * s.accuracySe).toFixed(1)} | ${s.peakReduction.toFixed(2)}× |`,
      );
    }
    model.dispose();
  }
});
