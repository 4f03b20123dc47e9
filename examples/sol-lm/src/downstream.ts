// SOL's downstream study on a generation task (Fig. 6): accuracy of greedy completions of the
// held-out prompts under SOL and under the fixed schedule at SOL's realised budget, e.g.
//   npm run downstream -- --model ../../models/countdown --weights ../../models/countdown-rl --policy runs/cd-c10/policy --out runs/downstream-cd-c10
// Writes <out>/downstream.json and <out>/downstream.md.

import { LetheError } from '@lethe/core';
import { parseIntegerFlag, parseNumberFlag } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { policyContextOf } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { loadTaskBackbone } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { downstreamMarkdown, runDownstream } from './downstream-run';
import { openSolPolicy, writeStudy } from './study-files';

const int = (flag: string, min: number) => (text: string) => parseIntegerFlag(text, flag, min);

const program = new Command()
  .name('sol-downstream')
  .description('Accuracy at matched net keep-rate of a SOL controller and the fixed schedule.')
  .requiredOption('--model <dir>', 'the generation task model (a lethe pretrain directory)')
  .option('--weights <dir>', 'these weights (same shape) instead of the task model’s')
  .requiredOption('--policy <dir>', 'the SOL policy directory (a training run’s policy/)')
  .requiredOption('--out <dir>', 'where downstream.json and downstream.md go')
  .option(
    '--points <list>',
    'operating points s in [0, 1] (targets: lowest + s · (highest − lowest) level per axis)',
    (text) => text.split(',').map((t) => parseNumberFlag(t, '--points')),
    [0.2, 0.4, 0.6, 0.8],
  )
  .option('--examples <n>', 'held-out examples (seed 0)', int('--examples', 1), 256)
  .option('--batch-size <n>', 'prompts generated together', int('--batch-size', 1), 64)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

await runMain(async () => {
  await initBackend('wasm');
  const { model, task } = await loadTaskBackbone(o.model, o.weights);
  try {
    if (task.kind !== 'generation') {
      throw new LetheError('E_ARG', `is a ${task.name} model, not a generation task's`, '--model');
    }
    const registry = createDefaultRegistry();
    const { sol, actions, horizon } = await openSolPolicy(registry, o.policy);
    try {
      const downstream = await runDownstream({
        model,
        task,
        context: policyContextOf(model, o.batchSize),
        registry,
        sol,
        actions,
        horizon,
        examples: o.examples,
        points: o.points,
        batchSize: o.batchSize,
        onProgress: (line) => process.stderr.write(`${line}\n`),
      });
      const settings = {
        model: o.model,
        ...(o.weights === undefined ? {} : { weights: o.weights }),
        policy: o.policy,
        examples: o.examples,
        batchSize: o.batchSize,
        points: o.points,
      };
      await writeStudy(
        o.out,
        'downstream',
        { settings, ...downstream },
        downstreamMarkdown(downstream),
      );
    } finally {
      sol.release();
    }
  } finally {
    model.dispose();
  }
});
