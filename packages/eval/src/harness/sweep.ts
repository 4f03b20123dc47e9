import { rm } from 'node:fs/promises';
import { LetheError } from '@lethe/core';
import type { PolicyRegistry } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import { createDefaultRegistry, type PolicyStore } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { createTask as createRegisteredTask, TASK_NAMES } from '../tasks/index';
import type { Task } from '../tasks/task';
import { requireObject } from './arguments';
import { runCell } from './cell-runner';
import { cellId, sweepCells } from './cells';
import { checkpointModels } from './checkpoint-models';
import { type Clock, systemClock } from './clock';
import { FullCacheReferences } from './full-reference';
import { knownPolicies } from './known-policies';
import type { ModelProvider } from './model-provider';
import { readResultsFile, writeResultsFile } from './node-results-file';
import { estimateRemainingMs, type ProgressCallback } from './progress';
import type { CellResult, SweepResults } from './results';
import { emptyResults } from './results-file';
import { checkpointOf, type SweepConfig, taskLabel, validateSweepConfig } from './sweep-config';

/** Builds a task from its registry name and options (the `createTask` of the tasks module). */
export type TaskFactory = (name: string, options: Readonly<Record<string, unknown>>) => Task;

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
}

/**
 * Runs a policy × budget sweep: every cell of `sweepCells(config)` in that deterministic order,
 * each with `runCell`, sharing per task one model (loaded before the task's first cell that has
 * to run, released after its last) and the full-cache reference runs per (task, seed).
 *
 * Resumable: with `resultsPath`, cells already in the file are skipped, and after each new
 * cell the file — format header, the normalised config, finished cells in sweep order — is
 * rewritten atomically, so a sweep stopped at any point and run again ends with a file
 * byte-identical to an uninterrupted run's (given the same clock readings). A file of another
 * format or version, or written for a different config, is refused rather than mixed with. A
 * run that created the file and fails or stops before its first cell finishes removes it.
 *
 * @returns every finished cell of the sweep.
 * @throws LetheError `E_ARG` naming `options` when it is not an object; the errors of
 *   `validateSweepConfig` (naming the field; unknown policy names list the registry's);
 *   `E_FORMAT` / `E_ARG` naming the results file (malformed, written by another config,
 *   unreadable or unwritable); `E_ARG` naming `tasks[i].name` when the task factory builds a
 *   task of another name; the errors of the cells. Rejects with `signal.reason` when aborted.
 */
export async function runSweep(
  config: SweepConfig | Readonly<Record<string, unknown>>,
  options: RunSweepOptions = {},
): Promise<SweepResults> {
  requireObject(options, 'options', 'a RunSweepOptions object');
  const registry = options.registry ?? createDefaultRegistry();
  const createTask: TaskFactory =
    options.createTask ?? ((name, taskOptions) => createRegisteredTask(name, taskOptions));
  const taskNames = options.createTask === undefined ? TASK_NAMES : options.taskNames;
  const sweep = validateSweepConfig(config, { ...knownPolicies(registry), tasks: taskNames });
  const clock = options.now ?? systemClock;
  const { resultsPath, signal, onProgress } = options;
  const tasks = new Map<string, Task>();
  sweep.tasks.forEach((spec, i) => {
    const task = createTask(spec.name, spec.options);
    if (task.name !== spec.name) {
      throw new LetheError('E_ARG', `builds a task named "${task.name}"`, `tasks[${i}].name`);
    }
    tasks.set(taskLabel(spec), task);
  });
  const models = options.models ?? checkpointModels(labelledCheckpoints(sweep), tasks);

  const grid = sweepCells(sweep);
  const finished = new Map<string, CellResult>();
  // Written before the first cell, so a path that cannot be written fails at once.
  let created = false;
  if (resultsPath !== undefined) {
    const existing = await readResultsFile(resultsPath, sweep);
    for (const cell of existing?.cells ?? []) finished.set(cellId(cell.key), cell);
    if (existing === undefined) {
      await writeResultsFile(resultsPath, emptyResults(sweep));
      created = true;
    }
  }
  const results = (): SweepResults => ({
    ...emptyResults(sweep),
    cells: grid.flatMap((key) => finished.get(cellId(key)) ?? []),
  });

  const start = clock();
  let toCompute = grid.filter((key) => !finished.has(cellId(key))).length;
  let computed = 0;
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
      const id = cellId(key);
      let result = finished.get(id);
      const skipped = result !== undefined;
      if (result === undefined) {
        signal?.throwIfAborted();
        if (loaded?.task !== key.task) {
          release();
          loaded = { task: key.task, model: await models.load(key.task) };
        }
        result = await runCell(key, {
          task: tasks.get(key.task)!,
          model: loaded.model,
          config: sweep,
          registry,
          policies: options.policies ?? nodePolicyStore(),
          clock,
          signal,
          references,
        });
        finished.set(id, result);
        if (resultsPath !== undefined) await writeResultsFile(resultsPath, results());
        computed += 1;
        toCompute -= 1;
        if (
          !grid
            .slice(index + 1)
            .some((next) => next.task === key.task && !finished.has(cellId(next)))
        ) {
          release();
        }
      }
      const elapsedMs = clock() - start;
      onProgress?.({
        index,
        total: grid.length,
        key,
        skipped,
        result,
        elapsedMs,
        etaMs: estimateRemainingMs(elapsedMs, computed, toCompute),
      });
    }
  } catch (error) {
    // A run that made the results file and finished no cell (a model that cannot be read, an
    // interrupt during the first cell) leaves none behind: the next run starts as if it had not
    // run, with this config or another.
    if (created && computed === 0) await rm(resultsPath!, { force: true });
    throw error;
  } finally {
    release();
  }
  return results();
}

/** The checkpoint directory of each task label of `sweep` that has one (see `checkpointOf`). */
function labelledCheckpoints(sweep: SweepConfig): Record<string, string> {
  const dirs: Record<string, string> = {};
  for (const label of sweep.tasks.map(taskLabel)) {
    const dir = checkpointOf(sweep, label);
    if (dir !== undefined) dirs[label] = dir;
  }
  return dirs;
}
