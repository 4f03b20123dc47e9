// The leaderboard, e.g.
//   npm run leaderboard                                   # from the repository root
//   npm start -- --config my-sweep.json --results my/results.json --out my/report
// Evaluates a sweep with `lethe eval` (each cell written to the results file as it finishes:
// an interrupted run resumes where it stopped, a finished one is not recomputed), then writes
// the report with `lethe report`, the suite's members averaged per budget.

import { readFileSync } from 'node:fs';
import { runMain } from '@lethe/eval/node';
import { Command } from 'commander';
import { averagedTasks, runLethe } from './lethe-commands';

const program = new Command()
  .name('leaderboard')
  .description(
    'Every policy of a sweep on the long-context suite; the report averages its members per budget.',
  )
  .option('--config <file>', 'the sweep (lethe eval --config)', 'sweep.json')
  .option(
    '--results <file>',
    'results file (gzip-compressed when it ends in .gz), resumed when it exists',
    'results/results.json.gz',
  )
  .option('--out <dir>', 'report directory (report.md, report.html, results.json)', 'report')
  .option(
    '--threads <n>',
    'worker threads computing cells side by side (lethe eval --threads)',
    '2',
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts<{ config: string; results: string; out: string; threads: string }>();

await runMain(async () => {
  const average = averagedTasks(JSON.parse(readFileSync(o.config, 'utf8')), o.config);
  await runLethe(['eval', '--config', o.config, '--results', o.results, '--threads', o.threads]);
  await runLethe([
    'report',
    '--results',
    o.results,
    '--out',
    o.out,
    ...(average.length > 1 ? ['--average-over', average.join(',')] : []),
  ]);
});
