import { LetheError } from '@lethe/core';
import { createTask as createRegisteredTask } from '../tasks/index';
import type { Task } from '../tasks/task';
import { checkpointOf, type SweepConfig, taskLabel } from './sweep-config';

/** Builds a task from its registry name and options (the `createTask` of the tasks module). */
export type TaskFactory = (name: string, options: Readonly<Record<string, unknown>>) => Task;

/**
 * The task of each task label of a validated sweep, built by `createTask` (default: the tasks
 * module's registry).
 *
 * @throws LetheError `E_ARG` naming `tasks[i].name` when the factory builds a task of another
 *   name; the factory's errors for bad options.
 */
export function sweepTasks(
  sweep: SweepConfig,
  createTask: TaskFactory = (name, options) => createRegisteredTask(name, options),
): Map<string, Task> {
  const tasks = new Map<string, Task>();
  sweep.tasks.forEach((spec, i) => {
    const task = createTask(spec.name, spec.options);
    if (task.name !== spec.name) {
      throw new LetheError('E_ARG', `builds a task named "${task.name}"`, `tasks[${i}].name`);
    }
    tasks.set(taskLabel(spec), task);
  });
  return tasks;
}

/** The checkpoint directory of each task label of `sweep` that has one (see `checkpointOf`). */
export function labelledCheckpoints(sweep: SweepConfig): Record<string, string> {
  const dirs: Record<string, string> = {};
  for (const label of sweep.tasks.map(taskLabel)) {
    const dir = checkpointOf(sweep, label);
    if (dir !== undefined) dirs[label] = dir;
  }
  return dirs;
}
