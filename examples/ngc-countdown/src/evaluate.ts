// Evaluates trained models on held-out Countdown problems, e.g.
//   pnpm --filter @lethe/example-ngc-countdown evaluate --baseline runs/no-evict \
//     --run ngc=runs/ngc --run token-only=runs/token-only --run dropout=runs/dropout
// Rerunning the same command resumes (finished cells are kept in --out).
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { GenerationTask } from '@lethe/eval';
import { loadTaskModel, readModelDirectory } from '@lethe/eval/node';
import type { DecoderModel, Tokenizer } from '@lethe/model';
import { withEvictionRateTag } from '@lethe/policies-ngc';
import { initBackend } from '@lethe/tensor';
import cliProgress from 'cli-progress';
import { Command } from 'commander';
import { integer, labelledDirectory, labels, positiveInteger, rates } from './cli-args';
import { BASELINE_HEURISTICS, evalPolicy, SNAPKV_WINDOW, trainedNgcShape } from './eval-policy';
import { cellKey, openResults, saveResults } from './eval-results';
import { evaluateMethod } from './evaluate-method';
import { runTokenizer } from './interoception-tokenizer';
import { NGC_RUN_FILE } from './run-file';
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
  .option('--out <file>', 'results file', 'out/ngc-eval.json')
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

await initBackend('wasm');
const base = await loadTaskModel(o.base);
const task = base.task as GenerationTask;
// The rounds every method shares, and SnapKV's observation window; an NGC run is evaluated with
// the block size and window it was trained with.
const schedule = { cadence: D.cadence, blockSize: D.blockSize, window: SNAPKV_WINDOW };
const settings = { examples: o.examples, evalSeed: o.evalSeed, ...schedule, decoding: 'greedy' };
const examples = Array.from({ length: o.examples }, (_, i) => task.example(o.evalSeed, i));
await mkdir(dirname(o.out), { recursive: true });
const results = await openResults(o.out, settings);
const done = new Set(results.cells.map((c) => cellKey(c.model, c.method, c.rate)));

const models: [string, string | DecoderModel][] = [
  ['sft', base.model],
  ['no-evict', o.baseline],
  ...o.run,
];
for (const label of o.heuristicsOn) {
  if (!models.some(([name]) => name === label)) {
    program.error(
      `error: --heuristics-on names "${label}", which is not sft, no-evict or a --run label`,
    );
  }
}
const plan: { model: string; method: string; rate: number }[] = [
  { model: 'sft', method: 'full', rate: 0 },
  { model: 'no-evict', method: 'full', rate: 0 },
  ...o.rates.flatMap((rate) => [
    ...o.heuristicsOn.flatMap((model) =>
      BASELINE_HEURISTICS.map((method) => ({ model, method, rate })),
    ),
    ...o.run.map(([model]) => ({ model, method: 'ngc', rate })),
  ]),
].filter((cell) => !done.has(cellKey(cell.model, cell.method, cell.rate)));

const bar = new cliProgress.SingleBar(
  {
    format: 'eval [{bar}] {value}/{total} examples | cell {cell} | {name}',
    noTTYOutput: true,
    notTTYSchedule: 10_000,
    stream: process.stderr,
  },
  cliProgress.Presets.shades_classic,
);
interface Loaded {
  readonly model: DecoderModel;
  readonly tokenizer: Tokenizer;
  /** Trained with the eviction-rate tag in its prompts (§5.3). */
  readonly interoception: boolean;
  /** NGC's block size and window as trained (runs only: NGC is evaluated on runs). */
  readonly ngc?: { readonly blockSize: number; readonly window: number };
}
const loaded = new Map<string, Loaded>();
const modelFor = async (label: string): Promise<Loaded> => {
  const source = models.find(([name]) => name === label)![1];
  if (typeof source !== 'string')
    return { model: source, tokenizer: task.tokenizer, interoception: false };
  if (!loaded.has(label)) {
    const { model, tokenizer } = await readModelDirectory(source);
    const run = JSON.parse(await readFile(join(source, NGC_RUN_FILE), 'utf8'));
    const interoception = run.settings.interoception === true;
    loaded.set(label, {
      model,
      tokenizer: runTokenizer(tokenizer!, run.settings),
      interoception,
      ngc: trainedNgcShape(run.settings, schedule.cadence, source),
    });
  }
  return loaded.get(label)!;
};
for (const [index, cell] of plan.entries()) {
  bar.start(o.examples, 0, {
    cell: `${index + 1}/${plan.length}`,
    name: cellKey(cell.model, cell.method, cell.rate),
  });
  const { model, tokenizer, interoception, ngc } = await modelFor(cell.model);
  const outcomes = await evaluateMethod({
    model,
    tokenizer,
    ...(interoception
      ? { promptText: (e: { prompt: string }) => withEvictionRateTag(e.prompt, cell.rate) }
      : {}),
    task,
    examples,
    batchSize: o.batchSize,
    policy: () =>
      cell.method === 'full'
        ? undefined
        : evalPolicy(cell.method, {
            rate: cell.rate,
            ...schedule,
            ...(cell.method === 'ngc' ? ngc : {}),
          }),
    onBatch: (n) => bar.update(n),
  });
  bar.stop();
  results.cells.push({ ...cell, outcomes });
  await saveResults(o.out, results);
}
for (const model of [base.model, ...[...loaded.values()].map((l) => l.model)]) model.dispose();
console.log(`${results.cells.length} cells in ${o.out}`);
