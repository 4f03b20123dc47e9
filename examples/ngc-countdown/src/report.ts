// Writes the NGC Countdown report (Markdown + SVG figures) from the evaluation results and the
// training runs, e.g.
//   npm run report -- --results out/ngc-eval --run ngc=runs/ngc --run no-evict=runs/no-evict \
//     --out out/report
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMain } from '@lethe/eval/node';
import { writeFileAtomic } from '@lethe/model/node';
import { Command } from 'commander';
import { labelledDirectory, labels, rate } from './cli-args';
import { readEvalCells } from './eval-cells';
import { ngcReport, type RunHistory } from './report-content';
import { NGC_RUN_FILE } from './run-file';

const o = new Command()
  .name('ngc-countdown-report')
  .requiredOption(
    '--results <path>',
    'evaluation results: the directory evaluate --out wrote, or a lethe-ngc-eval v1 file',
  )
  .option(
    '--run <label=dir>',
    'trained model directory whose training curves to plot',
    labelledDirectory,
    [],
  )
  .option('--rate <x>', 'the rate of the main comparison', rate, 0.5)
  .option('--curves <labels>', 'runs whose training curves to plot (default: every --run)', labels)
  .option('--out <dir>', 'report directory', 'out/report')
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{
    results: string;
    run: [string, string][];
    rate: number;
    curves?: string[];
    out: string;
  }>();

await runMain(async () => {
  const results = await readEvalCells(o.results);
  const runs: RunHistory[] = [];
  for (const [label, dir] of o.run) {
    const run = JSON.parse(await readFile(join(dir, NGC_RUN_FILE), 'utf8'));
    // Runs recorded before the warm-up existed had none.
    runs.push({ label, settings: { sftWarmupSteps: 0, ...run.settings }, history: run.history });
  }
  const report = ngcReport(results, runs, o.rate, o.curves);
  await mkdir(o.out, { recursive: true });
  await writeFileAtomic(join(o.out, 'report.md'), report.markdown);
  for (const [name, svg] of Object.entries(report.figures))
    await writeFileAtomic(join(o.out, name), svg);
  console.log(report.markdown);
});
