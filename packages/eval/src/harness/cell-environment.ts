import type { PolicyRegistry } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import type { PolicyStore } from '@lethe/policies';
import type { Task } from '../tasks/task';
import type { Clock } from './clock';
import type { FullCacheReferences } from './full-reference';
import type { SweepConfig } from './sweep-config';

/** Everything a cell needs besides its key. */
export interface CellEnvironment {
  /** The cell's task (its `name` must equal the key's `task`). */
  readonly task: Task;
  /** The model of the task; its `vocab_size` must cover the task's tokenizer. */
  readonly model: DecoderModel;
  /** The sweep the cell belongs to (examples, samples, sampling, batch size, pass@k). */
  readonly config: SweepConfig;
  /** Policy providers by name (see `createDefaultRegistry`). */
  readonly registry: PolicyRegistry;
  /**
   * Policy directories and the models they name, for cells of learned policies (a sweep policy
   * with a `dir`). Without it such a cell is refused.
   */
  readonly policies?: PolicyStore;
  /** Clock of every wall-time field. */
  readonly clock: Clock;
  /** Checked between decode steps; an abort rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /**
   * Memo of full-cache generation runs per (task, seed): share one across the cells of a sweep
   * so the reference runs once per (task, seed). Default: a fresh memo per cell.
   */
  readonly references?: FullCacheReferences;
}
