// Trains the quickstart model; with the defaults it regenerates the committed checkpoint/:
//   npm run train                                   (in examples/quickstart; seed 7, 400 steps, wasm)
//   npm run train -- --steps 200 --out my-model     (then: npm start -- --checkpoint my-model)

import { LetheError } from '@lethe/core';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { DEFAULT_CHECKPOINT, saveQuickstart } from './checkpoint-dir';
import { trainingBar } from './progress-bar';
import { QUICKSTART_SEED } from './tiny-model';
import { trainQuickstartModel, WARMUP_STEPS } from './train-model';

const program = new Command()
  .name('quickstart-train')
  .description('Train the tiny quickstart model on its embedded corpus and save it.')
  .option('--steps <n>', 'training steps', (v) => Number(v), 400)
  .option('--seed <n>', 'seed', (v) => Number(v), QUICKSTART_SEED)
  .option('--out <dir>', 'checkpoint directory', DEFAULT_CHECKPOINT)
  // `pnpm train -- --flag` forwards the `--` separator; drop it so the flags still parse.
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const opts = program.opts<{ steps: number; seed: number; out: string }>();

async function main(): Promise<void> {
  if (!(Number.isInteger(opts.steps) && opts.steps > WARMUP_STEPS)) {
    throw new LetheError(
      'E_ARG',
      `must be an integer > ${WARMUP_STEPS} (the learning rate warms up over ${WARMUP_STEPS} steps), got ${opts.steps}`,
      '--steps',
    );
  }
  if (!Number.isInteger(opts.seed)) {
    throw new LetheError('E_ARG', `must be an integer, got ${opts.seed}`, '--seed');
  }
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
}

// Caught here, not left to Node: tfjs's wasm module rethrows uncaught errors from its own
// handler, which prints a screen of its minified source before the error.
main().catch((error: unknown) => {
  console.error(error instanceof LetheError ? `error: ${error.message}` : error);
  process.exit(error instanceof LetheError ? 2 : 1);
});
