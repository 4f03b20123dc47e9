import { rm } from 'node:fs/promises';
import { assertInteger, LetheError } from '@lethe/core';
import type { PolicyRegistry } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import { createDefaultRegistry, type PolicyStore } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { TASK_NAMES } from '../tasks/index';
import type { Task } from '../tasks/task';
import { requireObject } from './arguments';
import type { CellEnvironment } from './cell-environment';
import { runCell } from './cell-runner';
import { sweepCells } from './cells';
import { checkpointModels } from './checkpoint-models';
import { type Clock, systemClock } from './clock';
import { FullCacheReferences } from './full-reference';
import { knownPolicies } from './known-policies';
import type { ModelProvider } from './model-provider';
import { readResultsFile, writeResultsFile } from './node-results-file';
import type { ProgressCallback } from './progress';
import type { CellKey, SweepResults } from './results';
import { emptyResults } from './results-file';
import { lockResultsFile } from './results-lock';
import { type SweepConfig, validateSweepConfig } from './sweep-config';
import { labelledCheckpoints, sweepTasks, type TaskFactory } from './sweep-context';
import { type PendingCell, runCellsOnPool } from './sweep-pool';
import { runCellsOnQueue, type SweepQueueOptions } from './sweep-queue';
import { SweepRecord } from './sweep-record';

export type { TaskFactory } from './sweep-context';

/** Options of {@link runSweep}. */
export interface RunSweepOptions {
  /**
   * Results file (JSON, `SweepResults`). Cells already in it are not recomputed; after every
   * finished cell the whole file is rewritten atomically. Without it, results stay in memory.
   */
  readonly resultsPath?: string;
  /** Called after every cell, computed or skipped. */
  readonly onProgress?: ProgressCallback;
  /** Clock of every wall-time field (default `performance.now`); inject one for exact tests. */
  readonly now?: Clock;
  /**
   * Stops the sweep: checked before each cell and between decode steps. The sweep then rejects
   * with `signal.reason`; the results file holds every cell finished before.
   */
  readonly signal?: AbortSignal;
  /** Policy providers by name (default: `createDefaultRegistry()`). */
  readonly registry?: PolicyRegistry;
  /** Policy directories of learned policies and the models they name (default: from disk). */
  readonly policies?: PolicyStore;
  /** Models by task label (default: each task's `checkpointOf` directory, via `checkpointModels`). */
  readonly models?: ModelProvider;
  /** Task factory (default: the tasks module's `createTask`, names checked against `TASK_NAMES`). */
  readonly createTask?: TaskFactory;
  /** Valid task names for config validation when `createTask` is given (default: not checked). */
  readonly taskNames?: readonly string[];
  /**
   * Worker threads that compute cells side by side (default 1: this thread, in sweep order). From
   * 2 on, a pool of threads each running `dist/sweep-cell-worker.js` (so from the package's
   * build): each builds the default registry, policy store and checkpoint models itself, so
   * `registry`, `policies`, `models`, `createTask` and `now` cannot be given with it. Results are
   * those of one thread but the wall-time fields; each thread runs a task's full-cache reference
   * once more.
   */
  readonly threads?: number;
  /**
   * Computes the cells as jobs on a Redis queue (`runCellsOnQueue`) that `lethe worker` processes
   * take, on this machine or others reading the same files (the sweep's paths as each worker's
   * working directory resolves them). Like a pool of threads, the workers build their own
   * defaults, so it cannot be given with `registry`, `policies`, `models`, `createTask`, `now` or
   * `threads` > 1. The results are those of one thread but the wall times; a results file resumes
   * as with threads, and a rerun after this process was killed takes over the jobs it left.
   */
  readonly queue?: SweepQueueOptions;
}

/** The options a pool of threads or a queue cannot take: objects of this thread. */
const IN_THREAD_OPTIONS = ['registry', 'policies', 'models', 'createTask', 'now'] as const;

/**
 * Runs a policy × budget sweep: every cell of `sweepCells(config)` with `runCell`. In this thread
 * (`threads` 1) the cells run in that deterministic order, sharing per task one model (loaded
 * before the task's first cell that has to run, released after its last) and the full-cache
 * reference runs per (task, seed); with `threads` > 1 they run side by side on a pool of worker
 * threads (`runCellsOnPool`), with `queue` as jobs on Redis for workers anywhere
 * (`runCellsOnQueue`), with the same results.
 *
 * Resumable: with `resultsPath`, cells already in the file are skipped, and after each new
 * cell the file — format header, the normalised config, finished cells in sweep order — is
 * rewritten atomically, so a sweep stopped at any point and run again ends with a file
 * byte-identical to an uninterrupted run's (given the same clock readings). A file of another
 * format or version, or written for a different config, is refused rather than mixed with. A
 * run that created the file and fails or stops before its first cell finishes removes it. The
 * file is locked while the sweep runs (`<file>.lock`, see `lockResultsFile`): a second run on it
 * is refused, never interleaved with the first.
 *
 * @returns every finished cell of the sweep.
 * @throws LetheError `E_ARG` naming `options` when it is not an object, `threads` when it is not
 *   an integer ≥ 1 or comes with an option a pool cannot take (or with `queue`), `queue` when it
 *   comes with an option its workers cannot take; the errors of
 *   `validateSweepConfig` (naming the field; unknown policy names list the registry's);
 *   `E_FORMAT` / `E_ARG` naming the results file (malformed, written by another config,
 *   unreadable or unwritable); `E_STATE` naming it when another run holds its lock, or took the
 *   lock over during this one (which then stops at its next batch); `E_ARG` naming
 *   `tasks[i].name` when the task factory builds a task of another name; the errors of the
 *   cells; with `queue`, those of `runOnQueue` (`E_QUEUE`: Redis does not answer, a job failed
 *   on every try). Rejects with `signal.reason` when aborted.
 */
export async function runSweep(
  config: SweepConfig | Readonly<Record<string, unknown>>,
  options: RunSweepOptions = {},
): Promise<SweepResults> {
  requireObject(options, 'options', 'a RunSweepOptions object');
  const threads = assertInteger(options.threads ?? 1, 'threads', 1);
  const given = IN_THREAD_OPTIONS.filter((name) => options[name] !== undefined);
  if (options.queue !== undefined && threads > 1) {
    throw new LetheError(
      'E_ARG',
      `is ${threads}: cells on a queue run on its workers' threads`,
      'threads',
    );
  }
  if (options.queue !== undefined && given.length > 0) {
    throw new LetheError(
      'E_ARG',
      `is given, and a queue's workers build their own defaults: ${given.join(', ')} cannot be given with it`,
      'queue',
    );
  }
  if (threads > 1 && given.length > 0) {
    throw new LetheError(
      'E_ARG',
      `is ${threads}, and a pool of threads builds its own defaults: ${given.join(', ')} cannot be given with it`,
      'threads',
    );
  }
  const registry = options.registry ?? createDefaultRegistry();
  const taskNames = options.createTask === undefined ? TASK_NAMES : options.taskNames;
  const sweep = validateSweepConfig(config, { ...knownPolicies(registry), tasks: taskNames });
  const run = {
    sweep,
    grid: sweepCells(sweep),
    tasks: sweepTasks(sweep, options.createTask),
    registry,
    threads,
    queue: options.queue,
    clock: options.now ?? systemClock,
  };
  const { resultsPath } = options;
  if (resultsPath === undefined) return runGrid({ ...run, signal: options.signal }, options);
  const held = await lockResultsFile(resultsPath);
  try {
    const signal =
      options.signal === undefined ? held.lost : AbortSignal.any([options.signal, held.lost]);
    return await runGrid({ ...run, resultsPath, signal }, options);
  } finally {
    await held.release();
  }
}

/** A sweep's grid and how to run it: what {@link runGrid} needs besides the caller's options. */
interface GridRun {
  readonly sweep: SweepConfig;
  readonly grid: readonly CellKey[];
  readonly tasks: ReadonlyMap<string, Task>;
  readonly registry: PolicyRegistry;
  readonly threads: number;
  readonly queue: SweepQueueOptions | undefined;
  readonly clock: Clock;
  /** The results file, locked by the caller; undefined: results in memory only. */
  readonly resultsPath?: string;
  readonly signal?: AbortSignal;
}

/**
 * Runs the cells of `run.grid` not yet in the results file (every cell without one), in this
 * thread or on a pool, writing the file after each; a run that created the file and finished no
 * cell removes it.
 */
async function runGrid(run: GridRun, options: RunSweepOptions): Promise<SweepResults> {
  const { sweep, grid, tasks, registry, threads, queue, clock, resultsPath, signal } = run;
  const { onProgress } = options;
  // Written before the first cell, so a path that cannot be written fails at once.
  let created = false;
  const existing =
    resultsPath === undefined ? undefined : await readResultsFile(resultsPath, sweep);
  if (resultsPath !== undefined && existing === undefined) {
    await writeResultsFile(resultsPath, emptyResults(sweep));
    created = true;
  }
  const record = new SweepRecord(sweep, grid, existing?.cells ?? [], {
    resultsPath,
    onProgress,
    clock,
  });
  try {
    if (threads === 1 && queue === undefined) {
      await runCellsInThread(grid, record, {
        tasks,
        models: options.models ?? checkpointModels(labelledCheckpoints(sweep), tasks),
        environment: {
          config: sweep,
          registry,
          policies: options.policies ?? nodePolicyStore(),
          clock,
          signal,
        },
      });
    } else {
      const pending: PendingCell[] = [];
      grid.forEach((key, index) => {
        const found = record.resultOf(key);
        if (found === undefined) pending.push({ index, key });
        else record.skip(index, found);
      });
      if (queue === undefined) await runCellsOnPool(sweep, pending, record, threads, signal);
      else await runCellsOnQueue(sweep, pending, record, queue, signal);
    }
  } catch (error) {
    // A run that made the results file and finished no cell (a model that cannot be read, an
    // interrupt during the first cell) leaves none behind: the next run starts as if it had not
    // run, with this config or another.
    if (created && record.computed === 0) await rm(resultsPath!, { force: true });
    throw error;
  }
  return record.results();
}

/**
 * The cells of `grid` in order in this thread: each finished one reported as skipped, each other
 * computed with the task's model (loaded before the task's first cell that has to run, released
 * after its last) and added to `record`.
 */
async function runCellsInThread(
  grid: readonly CellKey[],
  record: SweepRecord,
  context: {
    readonly tasks: ReadonlyMap<string, Task>;
    readonly models: ModelProvider;
    readonly environment: Omit<CellEnvironment, 'task' | 'model' | 'references'>;
  },
): Promise<void> {
  const { tasks, models, environment } = context;
  let loaded: { task: string; model: DecoderModel } | undefined;
  const references = new FullCacheReferences();
  const release = (): void => {
    if (loaded !== undefined) models.release?.(loaded.task, loaded.model);
    loaded = undefined;
    references.clear();
  };
  try {
    for (let index = 0; index < grid.length; index++) {
      const key = grid[index]!;
      const found = record.resultOf(key);
      if (found !== undefined) {
        record.skip(index, found);
        continue;
      }
      environment.signal?.throwIfAborted();
      if (loaded?.task !== key.task) {
        release();
        loaded = { task: key.task, model: await models.load(key.task) };
      }
      const result = await runCell(key, {
        ...environment,
        task: tasks.get(key.task)!,
        model: loaded.model,
        references,
      });
      await record.add(index, result);
      if (!grid.slice(index + 1).some((next) => next.task === key.task && !record.resultOf(next))) {
        release();
      }
    }
  } finally {
    release();
  }
}
