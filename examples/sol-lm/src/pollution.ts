// KV pollution (the SOL paper's Fig. 7) on the language model, e.g.
//   npm run pollution -- --model ../../models/lm --out study/pollution
// Writes <out>/pollution.json and <out>/pollution.md.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { encodeText, parseIntegerFlag } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { writeFileAtomic } from '@lethe/model/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { measurePollution, type PollutionKnob, pollutionMarkdown } from './pollution-run';

const int = (flag: string, min: number) => (text: string) => parseIntegerFlag(text, flag, min);

/** The cheapest setting of each knob in the paper's action sets (FL: κ 0.1, ρ 0.4, q 5). */
const KNOBS: readonly PollutionKnob[] = [
  { axis: 'tokenKeep', value: 0.1 },
  { axis: 'mlpInputKeep', value: 0.4 },
  { axis: 'activationBits', value: 5 },
];

const program = new Command()
  .name('sol-lm-pollution')
  .description('Direct and later cost of compressing each knob for a few decode steps.')
  .requiredOption('--model <dir>', 'the language-modelling task model')
  .requiredOption('--out <dir>', 'where pollution.json and pollution.md go')
  .option('--documents <n>', 'held-out documents (seed 0)', int('--documents', 1), 32)
  .option('--prefill <n>', 'tokens prefilled densely', int('--prefill', 1), 128)
  .option('--corrupt <n>', 'compressed decode steps', int('--corrupt', 1), 4)
  .option('--tail <n>', 'dense decode steps after them', int('--tail', 1), 12)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

await runMain(async () => {
  await initBackend('wasm');
  const { model, task } = await loadTaskModel(o.model);
  try {
    if (task.kind !== 'perplexity') {
      throw new LetheError('E_ARG', `is a ${task.name} model, not a language model`, '--model');
    }
    const documents = Array.from({ length: o.documents }, (_, i) =>
      encodeText(task.tokenizer, task.document(0, i)),
    );
    const settings = { prefill: o.prefill, corrupt: o.corrupt, tail: o.tail };
    const results = await measurePollution(model, documents, KNOBS, settings);
    await mkdir(o.out, { recursive: true });
    await writeFileAtomic(
      join(o.out, 'pollution.json'),
      `${JSON.stringify({ settings: { model: o.model, documents: o.documents, ...settings }, results }, null, 2)}\n`,
    );
    const markdown = pollutionMarkdown(results);
    await writeFileAtomic(join(o.out, 'pollution.md'), markdown);
    process.stdout.write(markdown);
  } finally {
    model.dispose();
  }
});
