// SOL's quality–efficiency study on the held-out language-modelling documents (Figs. 2, 4, 10 and
// Table 1), e.g.
//   npm run frontier -- --model ../../models/lm --policy runs/lm-2l/policy --out study/lm-2l
// Every method runs the paper's protocol: a dense prefill, then teacher-forced decode episodes
// of the policy's horizon with the KV refresh; writes <out>/frontier.json and <out>/frontier.md.

import { LetheError } from '@lethe/core';
import { encodeText, parseIntegerFlag, parseNumberFlag } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { policyContextOf } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { frontierMarkdown, runFrontier } from './frontier-run';
import { openSolPolicy, writeStudy } from './study-files';

const int = (flag: string, min: number) => (text: string) => parseIntegerFlag(text, flag, min);

const program = new Command()
  .name('sol-lm-frontier')
  .description('Perplexity vs net keep-rate of a trained SOL controller and the baselines.')
  .requiredOption('--model <dir>', 'the language-modelling task model the controller serves')
  .requiredOption('--policy <dir>', 'the SOL policy directory (a training run’s policy/)')
  .requiredOption('--out <dir>', 'where frontier.json and frontier.md go')
  .option(
    '--points <list>',
    'operating points s in [0, 1] (targets: lowest + s · (highest − lowest) level per axis)',
    (text) => text.split(',').map((t) => parseNumberFlag(t, '--points')),
    [0.2, 0.4, 0.6, 0.8],
  )
  .option('--documents <n>', 'held-out documents (seed 0)', int('--documents', 1), 32)
  .option('--prefill <n>', 'tokens prefilled densely before the episodes', int('--prefill', 1), 128)
  .option('--random <n>', 'random schedules per point (best of N)', int('--random', 0), 16)
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
    const registry = createDefaultRegistry();
    const { sol, actions, horizon } = await openSolPolicy(registry, o.policy);
    try {
      const frontier = await runFrontier({
        model,
        context: policyContextOf(model, documents.length),
        documents,
        prefill: o.prefill,
        registry,
        sol,
        actions,
        horizon,
        points: o.points,
        randomSchedules: o.random,
        onProgress: (line) => process.stderr.write(`${line}\n`),
      });
      const settings = {
        model: o.model,
        policy: o.policy,
        documents: o.documents,
        prefill: o.prefill,
        random: o.random,
        points: o.points,
      };
      await writeStudy(o.out, 'frontier', { settings, ...frontier }, frontierMarkdown(frontier));
    } finally {
      sol.release();
    }
  } finally {
    model.dispose();
  }
});
