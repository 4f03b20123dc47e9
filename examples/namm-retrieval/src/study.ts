// NAMM next to H2O, L2 and SnapKV at the cache size NAMM realises (the paper's Fig. 5), and what NAMM
// retains per layer (Fig. 6), e.g.
//   npm run study -- --model ../../models/retrieval-long --policy ../../models/namm-retrieval-long --out study
// Rerunning resumes from the results files in <out>.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SweepProgress } from '@lethe/eval';
import { runMain, runSweep } from '@lethe/eval/node';
import { writeFileAtomic } from '@lethe/model/node';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { parseTaskOptionsFlag, shellQuote } from '@lethe/task-models';
import { initBackend } from '@lethe/tensor';
import { Command, InvalidArgumentError } from 'commander';
import { integer } from './cli-values';
import { loadGenerationTaskModel } from './generation-task-model';
import { layerProfiles } from './layer-profile';
import { matchedBudgets, matchedStudy, matchedSweep, nammSweep } from './matched-budgets';
import { studyReport } from './study-report';

function fractions(value: string): number[] {
  const list = value.split(',').map(Number);
  if (list.some((x) => !(x > 0 && x <= 1)))
    throw new InvalidArgumentError('must be comma-separated fractions in (0, 1]');
  return list;
}

const o = new Command()
  .name('namm-retrieval-study')
  .description('NAMM against H2O, L2 and SnapKV at matched cache sizes, and per-layer retention.')
  .requiredOption('--model <dir>', 'task model (a lethe pretrain directory)')
  .requiredOption('--policy <dir>', 'NAMM policy directory')
  .option('--budgets <list>', 'NAMM budget fractions', fractions, [1, 0.5, 0.25])
  .option('--examples <n>', 'held-out examples per cell', integer, 64)
  .option('--seed <n>', 'evaluation seed', integer, 0)
  .option('--prefill-chunk <n>', 'prompt tokens per prefill chunk, evicting between', integer, 16)
  .option(
    '--task-options <json>',
    "options over the model's task's, e.g. one suite member at one length (default: the task as trained)",
  )
  .option('--out <dir>', 'results and report directory', 'study')
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{
    model: string;
    policy: string;
    budgets: number[];
    examples: number;
    seed: number;
    prefillChunk: number;
    taskOptions?: string;
    out: string;
  }>();

await runMain(async () => {
  await initBackend('wasm');
  const { model, task } = await loadGenerationTaskModel(
    o.model,
    o.taskOptions === undefined ? undefined : parseTaskOptionsFlag(o.taskOptions),
    { model: '--model', taskOptions: '--task-options' },
  );
  const spec = { name: task.name, options: task.options as Record<string, unknown> };
  await mkdir(o.out, { recursive: true });
  // The sweeps run on the model loaded here (their configs still name its directory).
  const models = { load: () => model };
  const progress = (label: string) => (p: SweepProgress) =>
    console.error(`${label}: ${p.index + 1}/${p.total} cells (${p.key.policy} at ${p.key.budget})`);
  try {
    const namm = await runSweep(nammSweep(o, spec), {
      resultsPath: join(o.out, 'namm.json'),
      models,
      onProgress: progress('full cache and NAMM'),
    });
    const budgets = matchedBudgets(o, namm);
    const matched = await runSweep(matchedSweep(o, spec, budgets), {
      resultsPath: join(o.out, 'matched.json'),
      models,
      onProgress: progress('H2O, L2 and SnapKV at NAMM’s size'),
    });
    const study = matchedStudy(o, namm, matched);
    const store = nodePolicyStore();
    const prepared = await createDefaultRegistry().prepare('namm', {
      directory: await store.open(o.policy),
    });
    console.error('per-layer profile …');
    const profiles = await layerProfiles({
      model,
      task,
      policy: prepared,
      budgets: o.budgets,
      examples: o.examples,
      seed: o.seed,
      prefillChunk: o.prefillChunk,
    });
    const taskFlag =
      o.taskOptions === undefined ? '' : ` --task-options ${shellQuote(o.taskOptions)}`;
    const command = `npm run study -- --model ${o.model} --policy ${o.policy}${taskFlag} --budgets ${o.budgets.join(',')} --examples ${o.examples} --seed ${o.seed} --prefill-chunk ${o.prefillChunk} --out ${o.out}`;
    const report = studyReport(study, profiles, command);
    await writeFileAtomic(join(o.out, 'study.md'), report.markdown);
    for (const [name, svg] of Object.entries(report.figures))
      await writeFileAtomic(join(o.out, name), svg);
    console.log(report.markdown);
  } finally {
    model.dispose();
  }
});
