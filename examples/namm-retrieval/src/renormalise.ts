// An evolved NAMM moved to another model of its family with the feature normalisation measured on
// that model (the genome untouched), e.g.
//   npm run renormalise -- --policy ../../models/namm-suite-niah1k --model ../../models/suite-retrieval-l3-2k --task-options '{"member":"niah-multi","contextChars":1024}' --out suite/namm-renormalised-l3-2k
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { runMain } from '@lethe/eval/node';
import { writeFileAtomic, writePolicyDirectory } from '@lethe/model/node';
import { nodePolicyStore } from '@lethe/policies/node';
import { parseTaskOptionsFlag } from '@lethe/task-models';
import { initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { integer } from './cli-values';
import { loadGenerationTaskModel } from './generation-task-model';
import { normalisationShift, renormalisedNamm } from './renormalisation';

const o = new Command()
  .name('namm-renormalise')
  .description(
    "An evolved NAMM's policy directory with its feature normalisation measured on another model.",
  )
  .requiredOption('--policy <dir>', 'evolved NAMM policy directory')
  .requiredOption('--model <dir>', 'the model to measure on (a lethe pretrain directory)')
  .option('--task-options <json>', "options over the model's task's, as the evolution's")
  .option('--prompts <n>', "prompts of the evolution's first generation to measure on", integer, 32)
  .requiredOption('--out <dir>', 'policy directory to write')
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{ policy: string; model: string; taskOptions?: string; prompts: number; out: string }>();

await runMain(async () => {
  if (o.prompts < 1) throw new LetheError('E_ARG', `must be ≥ 1, got ${o.prompts}`, '--prompts');
  await initBackend('wasm');
  const source = await nodePolicyStore().open(o.policy);
  const { model, task } = await loadGenerationTaskModel(
    o.model,
    o.taskOptions === undefined ? undefined : parseTaskOptionsFlag(o.taskOptions),
    { model: '--model', taskOptions: '--task-options' },
  );
  try {
    const result = await renormalisedNamm(source, model, task, o.prompts);
    await writePolicyDirectory(o.out, result.contents);
    const shift = normalisationShift(result.before, result.after);
    const record = {
      policy: o.policy,
      model: o.model,
      prompts: o.prompts,
      before: { mean: [...result.before.mean], std: [...result.before.std] },
      after: { mean: [...result.after.mean], std: [...result.after.std] },
      ...shift,
    };
    await writeFileAtomic(
      join(o.out, 'renormalisation.json'),
      `${JSON.stringify(record, null, 2)}\n`,
    );
    console.log('| bin | mean shift (old std) | std ratio |\n| --: | --: | --: |');
    shift.meanShift.forEach((m, i) => {
      console.log(`| ${i} | ${m.toFixed(2)} | ${shift.stdRatio[i]!.toFixed(2)} |`);
    });
  } finally {
    model.dispose();
  }
});
