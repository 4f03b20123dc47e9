import { inFile, LetheError } from '@lethe/core';
import {
  checkResults,
  isPlainObject,
  RESULTS_FORMAT,
  RESULTS_VERSION,
  validateSweepConfig,
} from '@lethe/eval';
import { readJsonPath, writeReport } from '@lethe/eval/node';
import { createDefaultRegistry } from '@lethe/policies';
import type { Command } from 'commander';
import { reportOptions } from './report-options';

/**
 * Adds `lethe report`: reads a results file (`lethe eval --results`, checked like a sweep
 * resuming from it) and writes `report.md`, `report.html` and `results.json` into `--out` (a
 * directory that cannot be written is reported naming `--out`), each policy compared with the
 * best heuristic at its budget where the cells carry per-example outcomes; `--average-over` adds
 * the average accuracy of some tasks per budget, first (a suite's score, as kvpress shows it).
 */
export function addReportCommand(program: Command): void {
  program
    .command('report')
    .summary('write a Markdown/HTML report')
    .description('Write report.md, report.html and results.json from a results file.')
    .requiredOption(
      '--results <file>',
      'results file written by lethe eval --results (.gz: gzip-compressed)',
    )
    .requiredOption('--out <dir>', 'report directory (created if missing)')
    .option(
      '--average-over <labels>',
      'comma-separated task labels whose accuracy the report averages per budget, shown first (a suite score)',
    )
    .action(async (opts: { results: string; out: string; averageOver?: string }) => {
      const json = await readJsonPath(opts.results);
      if (!isPlainObject(json)) {
        throw new LetheError('E_FORMAT', 'is not a JSON object', opts.results);
      }
      if (json.format !== RESULTS_FORMAT || json.version !== RESULTS_VERSION) {
        throw new LetheError(
          'E_FORMAT',
          `is not a ${RESULTS_FORMAT} file of version ${RESULTS_VERSION} (format ${JSON.stringify(json.format)}, version ${JSON.stringify(json.version)})`,
          opts.results,
        );
      }
      let results: ReturnType<typeof checkResults>;
      let config: ReturnType<typeof validateSweepConfig>;
      try {
        config = validateSweepConfig(json.config);
        results = checkResults(json, config, opts.results);
      } catch (error) {
        throw inFile(opts.results, error);
      }
      const options = reportOptions(results, config, createDefaultRegistry(), opts.averageOver);
      let files: Awaited<ReturnType<typeof writeReport>>;
      try {
        files = await writeReport(opts.out, results, options);
      } catch (error) {
        if (error instanceof LetheError) throw error;
        // A file-system error: `--out` names a file, or a directory that cannot be written.
        const reason = error instanceof Error ? error.message : String(error);
        throw new LetheError('E_ARG', `cannot be written: ${reason}`, `--out (${opts.out})`);
      }
      console.log(`${results.cells.length} cells`);
      console.log(`wrote ${files.markdown}`);
      console.log(`wrote ${files.html}`);
      console.log(`wrote ${files.results}`);
    });
}
