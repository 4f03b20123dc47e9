import { LetheError } from '@lethe/core';
import { createTask, type GenerationTask, type SuiteOptions } from '@lethe/eval';
import type { TaskModel } from '@lethe/task-models/node';

/** The suite member NGC trains on: Countdown whose answer follows its written search. */
export const SUITE_COUNTDOWN_MEMBER = 'countdown-verbose';

/**
 * The Countdown task an NGC run trains and is evaluated on, from the task model it starts from:
 * a Countdown model's own task (with the options it was trained with), or, for a model of the
 * long-context suite, the suite's verbose Countdown member at the model's (longest) context
 * length, whatever spread of lengths the model was trained on, in the trace form it was trained
 * on (`countdownGoal`) — the regime of the paper, where
 * the model's own trace is several times longer than its prompt.
 *
 * @throws LetheError `E_ARG` naming `model` for a model of any other task.
 */
export function countdownTaskOf(base: Pick<TaskModel, 'task'>): GenerationTask {
  const { task } = base;
  if (task.kind === 'generation' && task.name === 'countdown') return task;
  if (task.kind === 'generation' && task.name === 'suite') {
    // At the model's longest context, without a training spread of lengths, in its trace form.
    const { contextChars, countdownGoal } = task.options as SuiteOptions;
    return createTask('suite', {
      member: SUITE_COUNTDOWN_MEMBER,
      contextChars,
      countdownGoal,
    }) as GenerationTask;
  }
  throw new LetheError(
    'E_ARG',
    `is a ${task.name} model, not Countdown or the suite (whose ${SUITE_COUNTDOWN_MEMBER} member NGC trains on)`,
    'model',
  );
}
