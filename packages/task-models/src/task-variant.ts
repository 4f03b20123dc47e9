import { LetheError, withArgument } from '@lethe/core';
import { createTask, type Task } from '@lethe/eval';

/**
 * A variant of a task model's task: `options` over the task's own (e.g. one suite member at one
 * length on a model trained on the suite's mixture), or `task` itself when `options` is
 * undefined. Trainers use it to train or evolve on other examples than the model's own.
 *
 * @example
 * ```ts
 * const niah = taskVariant(taskModel.task, { member: 'niah-multi', contextChars: 1024 }, 'taskOptions');
 * ```
 *
 * @throws LetheError the task's own error for an option it refuses, naming `argument` (e.g.
 *   `taskOptions`) instead of the option.
 */
export function taskVariant(
  task: Task,
  options: Readonly<Record<string, unknown>> | undefined,
  argument: string,
): Task {
  if (options === undefined) return task;
  try {
    return createTask(task.name, { ...(task.options as object), ...options });
  } catch (error) {
    throw error instanceof LetheError ? withArgument(error, argument) : error;
  }
}
