// Regenerates the committed quickstart checkpoint:
//   pnpm --filter @lethe/example-quickstart train            (seed 7, 400 steps, wasm)
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { DEFAULT_CHECKPOINT, saveQuickstart } from './checkpoint-dir';
import { trainingBar } from './progress-bar';
import { QUICKSTART_SEED } from './tiny-model';
import { trainQuickstartModel } from './train-model';

const program = new Command()
  .name('quickstart-train')
  .description('Train the tiny quickstart model on its embedded corpus and save it.')
  .option('--steps <n>', 'training steps', (v) => Number.parseInt(v, 10), 400)
  .option('--seed <n>', 'seed', (v) => Number.parseInt(v, 10), QUICKSTART_SEED)
  .option('--out <dir>', 'checkpoint directory', DEFAULT_CHECKPOINT)
  // `pnpm start -- --flag` forwards the `--` separator; drop it so the flags still parse.
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const opts = program.opts<{ steps: number; seed: number; out: string }>();

await initBackend('wasm');
const bar = trainingBar(opts.steps);
const { model, tokenizer, loss } = await trainQuickstartModel({
  steps: opts.steps,
  seed: opts.seed,
  onProgress: bar.update,
});
bar.stop();
await saveQuickstart(opts.out, model, tokenizer);
console.log(`saved to ${opts.out} (final loss ${loss?.toFixed(3)})`);
