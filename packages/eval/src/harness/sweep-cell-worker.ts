// The module each thread of a sweep's pool runs (`runSweep` with `threads` > 1): built to
// `dist/sweep-cell-worker.js`, next to the `@lethe/eval/node` build that starts the pool.
import type { DecoderModel } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { type BackendName, initBackend } from '@lethe/tensor';
import type { Task } from '../tasks/task';
import type { CellEnvironment } from './cell-environment';
import { failureOf, type SweepCellFailure } from './cell-failure';
import { runCell } from './cell-runner';
import { checkpointModels } from './checkpoint-models';
import { systemClock } from './clock';
import { FullCacheReferences } from './full-reference';
import type { ModelProvider } from './model-provider';
import type { CellKey, CellResult } from './results';
import type { SweepConfig } from './sweep-config';
import { labelledCheckpoints, sweepTasks } from './sweep-context';

/** One cell for a thread: the sweep (validated, plain data), the cell and the tfjs backend. */
export type { SweepCellFailure } from './cell-failure';

export interface SweepCellJob {
  readonly config: SweepConfig;
  readonly key: CellKey;
  readonly backend: string;
}

/** What a thread sends back: the cell's result, or why it failed. */
export type SweepCellOutcome =
  | { readonly result: CellResult }
  | { readonly failure: SweepCellFailure };

/**
 * What a thread keeps between cells of one sweep: its tasks, the models it loaded (one per task
 * label, for the pool's lifetime), the providers and the full-cache references, so each runs
 * once per thread.
 */
interface ThreadState {
  readonly sweepJson: string;
  readonly tasks: Map<string, Task>;
  readonly models: ModelProvider;
  readonly loaded: Map<string, Promise<DecoderModel>>;
  readonly environment: Omit<CellEnvironment, 'task' | 'model'>;
}

let state: ThreadState | undefined;
let backend: Promise<string> | undefined;

/** The thread's state for `config`, built on its first cell (a pool serves one sweep). */
function stateFor(config: SweepConfig): ThreadState {
  const sweepJson = JSON.stringify(config);
  if (state?.sweepJson === sweepJson) return state;
  const tasks = sweepTasks(config);
  state = {
    sweepJson,
    tasks,
    models: checkpointModels(labelledCheckpoints(config), tasks),
    loaded: new Map(),
    environment: {
      config,
      registry: createDefaultRegistry(),
      policies: nodePolicyStore(),
      clock: systemClock,
      references: new FullCacheReferences(),
    },
  };
  return state;
}

/** Runs one cell of the sweep in this thread (the pool's task function). */
export default async function runSweepCell(job: SweepCellJob): Promise<SweepCellOutcome> {
  try {
    backend ??= initBackend(job.backend as BackendName);
    await backend;
    const thread = stateFor(job.config);
    const label = job.key.task;
    let model = thread.loaded.get(label);
    if (model === undefined) {
      const loading = Promise.resolve(thread.models.load(label));
      thread.loaded.set(label, loading);
      loading.catch(() => thread.loaded.delete(label));
      model = loading;
    }
    const result = await runCell(job.key, {
      ...thread.environment,
      task: thread.tasks.get(label)!,
      model: await model,
    });
    return { result };
  } catch (error) {
    return { failure: failureOf(error) };
  }
}
