// Writes the evolution report of a run (the paper's Fig. 4 and the cache size per generation),
//   npm run report -- --run ../../models/namm-retrieval --out out/report
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { runMain } from '@lethe/eval/node';
import { writeFileAtomic } from '@lethe/model/node';
import { readNammCheckpoint } from '@lethe/policies-namm/train/node';
import { Command } from 'commander';
import { evolutionReport } from './evolution-report';
import { CHECKPOINT_FILE } from './evolve-run';

const o = new Command()
  .name('namm-retrieval-report')
  .requiredOption('--run <dir>', 'run directory (its checkpoint.json)')
  .option('--out <dir>', 'report directory', 'out/report')
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')))
  .opts<{ run: string; out: string }>();

await runMain(async () => {
  const path = join(o.run, CHECKPOINT_FILE);
  const checkpoint = await readNammCheckpoint(path);
  if (checkpoint === undefined) throw new LetheError('E_ARG', `has no ${CHECKPOINT_FILE}`, '--run');
  const report = evolutionReport(checkpoint.history);
  await mkdir(o.out, { recursive: true });
  await writeFileAtomic(join(o.out, 'report.md'), report.markdown);
  for (const [name, svg] of Object.entries(report.figures))
    await writeFileAtomic(join(o.out, name), svg);
  console.log(
    `wrote ${join(o.out, 'report.md')} and ${Object.keys(report.figures).length} figures`,
  );
});
