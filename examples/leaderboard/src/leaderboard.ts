// The leaderboard, e.g.
//   npm run leaderboard                                   # from the repository root
//   npm start -- --config my-sweep.json --results my/results.json --out my/report
// Evaluates a sweep with `lethe eval` (each cell written to the results file as it finishes:
// an interrupted run resumes where it stopped, a finished one is not recomputed), then writes
// the report with `lethe report`, the suite's members averaged per budget. With --redis the cells
// are jobs for `lethe worker --redis <url>` processes, here or on other machines (lethe eval --redis).

import { readFileSync } from 'node:fs';
import { LetheError } from '@lethe/core';
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
  .option(
    '--redis <url>',
    'compute the cells as jobs on this Redis server for `lethe worker --redis <url>` processes started in this directory, here or on other machines (lethe eval --redis; the same results)',
  )
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts<{
  config: string;
  results: string;
  out: string;
  threads: string;
  redis?: string;
}>();

await runMain(async () => {
  if (o.redis !== undefined && program.getOptionValueSource('threads') !== 'default') {
    throw new LetheError(
      'E_ARG',
      'cannot be given with --redis: the workers compute the cells (each `lethe worker --threads n`)',
      '--threads',
    );
  }
  const average = averagedTasks(JSON.parse(readFileSync(o.config, 'utf8')), o.config);
  const compute = o.redis === undefined ? ['--threads', o.threads] : ['--redis', o.redis];
  await runLethe(['eval', '--config', o.config, '--results', o.results, ...compute]);
  await runLethe([
    'report',
    '--results',
    o.results,
    '--out',
    o.out,
    ...(average.length > 1 ? ['--average-over', average.join(',')] : []),
  ]);
});
