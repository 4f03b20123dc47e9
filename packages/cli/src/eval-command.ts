import { inFile, LetheError, withArgument } from '@lethe/core';
import type { SweepResults } from '@lethe/eval';
import {
  createTask,
  EVAL_FLAGS,
  knownPolicies,
  parseEvalFlags,
  parseIntegerFlag,
  policyParts,
  renderMarkdown,
  type SweepConfig,
  seedsOf,
  sweepCells,
  TASK_NAMES,
  taskLabel,
  validateSweepConfig,
} from '@lethe/eval';
import { EXIT_INTERRUPTED, readJsonPath, runSweep } from '@lethe/eval/node';
import type { PolicyRegistry } from '@lethe/kv-cache';
import { createDefaultRegistry, type PolicyStore } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { isTrainingSeed, TRAINING_SEED_OFFSET } from '@lethe/task-models';
import { type BackendName, initBackend } from '@lethe/tensor';
import type { Command } from 'commander';
import { evalFlagOf, nameFlag } from './flag-errors';
import { interruptController } from './interrupt';
import { declareFlags, givenFlagArgs } from './option-args';
import { sweepBar } from './progress-bars';
import { reportOptions } from './report-options';

/**
 * Builds the task once to check its options.
 *
 * @throws LetheError the task's error, about `<field>.<option>` (e.g. `tasks[0].options.count`).
 */
function checkTaskOptions(
  name: string,
  options: Readonly<Record<string, unknown>>,
  field: string,
): void {
  try {
    createTask(name, options);
  } catch (error) {
    if (error instanceof LetheError && error.argument !== undefined) {
      throw withArgument(error, `${field}.${error.argument}`);
    }
    throw error;
  }
}

/**
 * Prepares every policy of the sweep once — each part of a composition — with its options
 * validated and policy directory read, so a bad option or a missing directory is reported before
 * anything heavy starts.
 *
 * @throws LetheError the registry's and the store's errors, about `policies[i].<field>`
 *   (`options.<key>` becomes `policies[i].options.<key>`, `policyDir` `policies[i].dir`; for a
 *   composition's part `j`, `policies[i].compose[j].<field>`).
 */
async function checkPolicies(
  config: SweepConfig,
  registry: PolicyRegistry,
  store: PolicyStore,
): Promise<void> {
  for (const [i, spec] of config.policies.entries()) {
    for (const [j, part] of policyParts(spec).entries()) {
      try {
        const directory = part.dir === null ? undefined : await store.open(part.dir);
        (await registry.prepare(part.name, { options: part.options, directory })).release();
      } catch (error) {
        if (error instanceof LetheError && error.argument !== undefined) {
          const field = error.argument === 'policyDir' ? 'dir' : error.argument;
          if (field === 'dir' || field === 'options' || field.startsWith('options.')) {
            const at =
              spec.compose === undefined ? `policies[${i}]` : `policies[${i}].compose[${j}]`;
            throw withArgument(error, `${at}.${field}`);
          }
        }
        throw error;
      }
    }
  }
}

/**
 * The sweep a `lethe eval` command line denotes: one cell from the flags of `EVAL_FLAGS`
 * (exactly those `reproduceCommand` prints), or the sweep of `--config`. Task and policy names
 * are checked against the registries (errors list the valid names) and task options by
 * building each task, before anything heavy starts.
 */
async function sweepOf(
  configPath: string | undefined,
  cellArgs: readonly string[],
  registry: PolicyRegistry,
  store: PolicyStore,
): Promise<SweepConfig> {
  const known = { ...knownPolicies(registry), tasks: TASK_NAMES };
  if (configPath !== undefined) {
    if (cellArgs.length > 0) {
      throw new LetheError(
        'E_ARG',
        `cannot be combined with the cell flags (${cellArgs.filter((_, i) => i % 2 === 0).join(', ')})`,
        '--config',
      );
    }
    const json = await readJsonPath(configPath);
    try {
      const config = validateSweepConfig(json, known);
      config.tasks.forEach((task, i) => {
        checkTaskOptions(task.name, task.options, `tasks[${i}].options`);
      });
      await checkPolicies(config, registry, store);
      return config;
    } catch (error) {
      throw inFile(configPath, error);
    }
  }
  try {
    const config = validateSweepConfig(parseEvalFlags(cellArgs), known);
    checkTaskOptions(config.tasks[0]!.name, config.tasks[0]!.options, 'tasks[0].options');
    await checkPolicies(config, registry, store);
    return config;
  } catch (error) {
    throw nameFlag(error, evalFlagOf);
  }
}

/**
 * Adds `lethe eval`: one cell from the flags `reproduceCommand` prints, or a whole sweep from
 * `--config sweep.json`; with `--results results.json` the results are written after every
 * cell and a rerun resumes (a results file that cannot be read or written, or holds a malformed
 * cell, is reported naming `--results`). A progress bar (cells, ETA) runs on stderr; the Markdown
 * results table (and, for one cell, its reproduce command) goes to stdout.
 */
export function addEvalCommand(program: Command): void {
  const command = program
    .command('eval')
    .summary('evaluate one cell or a whole sweep')
    .description(
      'Evaluate one sweep cell (the flags of a reproduce command) or a whole sweep ' +
        '(--config sweep.json), then print the results table. With --results the results ' +
        'are saved after every cell and a rerun resumes.',
    );
  declareFlags(command, EVAL_FLAGS);
  command
    .option('--config <file>', 'sweep configuration (JSON, see SweepConfig) instead of cell flags')
    .option(
      '--results <file>',
      'results file: written after every cell (gzip-compressed when it ends in .gz); a rerun resumes from it',
    )
    .option('--backend <name>', 'tfjs backend: wasm (default), cpu, webgpu, auto')
    .option(
      '--threads <n>',
      'worker threads computing cells side by side (default 1; the same results)',
    )
    .option(
      '--redis <url>',
      'compute the cells as jobs on this Redis server, taken by `lethe worker` processes here or on other machines (the same results)',
    )
    .action(
      async (opts: {
        config?: string;
        results?: string;
        backend?: string;
        threads?: string;
        redis?: string;
      }) => {
        const threads =
          opts.threads === undefined ? 1 : parseIntegerFlag(opts.threads, '--threads', 1);
        const registry = createDefaultRegistry();
        const store = nodePolicyStore();
        const cellArgs = givenFlagArgs(command, EVAL_FLAGS);
        // First: a learned provider may upload its parameters when the sweep's policies are checked.
        await initBackend((opts.backend ?? 'wasm') as BackendName);
        const config = await sweepOf(opts.config, cellArgs, registry, store);
        const allSeeds = new Set(config.tasks.flatMap((task) => seedsOf(config, taskLabel(task))));
        for (const seed of [...allSeeds].filter(isTrainingSeed)) {
          process.stderr.write(
            `lethe: warning: seed ${seed} lies in the range task models train on (≥ ${TRAINING_SEED_OFFSET}); its examples are not held out\n`,
          );
        }
        const bar = sweepBar(sweepCells(config).length);
        const interrupt = interruptController(() => {
          process.stderr.write('\nstopping after this decode step…\n');
        });
        let results: SweepResults;
        try {
          results = await runSweep(config, {
            // A pool's threads and a queue's workers build their own registry and store.
            ...(opts.redis !== undefined
              ? { threads, queue: { redis: opts.redis, onRefused: warnRefused } }
              : threads === 1
                ? { registry, policies: store }
                : { threads }),
            resultsPath: opts.results,
            onProgress: bar.update,
            signal: interrupt.signal,
          });
        } catch (error) {
          bar.stop();
          if (interrupt.interrupted()) {
            console.log(
              opts.results === undefined
                ? 'interrupted (no --results file, nothing kept)'
                : `interrupted; finished cells are in ${opts.results}; run the same command to resume`,
            );
            process.exitCode = EXIT_INTERRUPTED;
            return;
          }
          // An unreadable, unwritable or malformed results file: name the flag that gave it.
          throw nameFlag(error, (field) =>
            field === opts.results ? '--results' : field === 'redis' ? '--redis' : undefined,
          );
        } finally {
          interrupt.dispose();
        }
        bar.stop();
        process.stdout.write(
          `\n${renderMarkdown(results, reportOptions(results, config, registry))}`,
        );
        if (opts.config === undefined) {
          process.stdout.write(`\nreproduce: ${results.cells[0]!.command}\n`);
        }
        if (opts.results !== undefined) process.stdout.write(`\nresults: ${opts.results}\n`);
      },
    );
}

/** A worker's refusal of a queued sweep (its files or packages differ), on stderr. */
function warnRefused(message: string): void {
  process.stderr.write(`\nlethe: warning: ${message}\n`);
}
