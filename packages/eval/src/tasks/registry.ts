import { LetheError } from '@lethe/core';
import { type ArithmeticOptions, type ArithmeticOptionsInput, arithmeticTask } from './arithmetic';
import { type CountdownOptions, type CountdownOptionsInput, countdownTask } from './countdown';
import {
  type LanguageModelOptions,
  type LanguageModelOptionsInput,
  languageModelTask,
} from './language-model';
import { type RetrievalOptions, type RetrievalOptionsInput, retrievalTask } from './retrieval';
import { type SuiteOptions, type SuiteOptionsInput, suiteTask } from './suite';
import type { GenerationTask, PerplexityTask, Task } from './task';

/** Registry names of the tasks, in documentation order. */
export const TASK_NAMES = ['countdown', 'retrieval', 'arithmetic', 'lm', 'suite'] as const;

/** A registry task name. */
export type TaskName = (typeof TASK_NAMES)[number];

/** The options each registry task accepts. */
export interface TaskOptionsByName {
  countdown: CountdownOptionsInput;
  retrieval: RetrievalOptionsInput;
  arithmetic: ArithmeticOptionsInput;
  lm: LanguageModelOptionsInput;
  suite: SuiteOptionsInput;
}

/** The task each registry name creates. */
export interface TaskByName {
  countdown: GenerationTask<CountdownOptions>;
  retrieval: GenerationTask<RetrievalOptions>;
  arithmetic: GenerationTask<ArithmeticOptions>;
  lm: PerplexityTask<LanguageModelOptions>;
  suite: GenerationTask<SuiteOptions>;
}

/** Whether `name` is a registry task name. */
export function isTaskName(name: unknown): name is TaskName {
  return typeof name === 'string' && (TASK_NAMES as readonly string[]).includes(name);
}

/**
 * Creates a task by registry name: `countdown`, `retrieval` (option `variant`: `niah-single`,
 * `niah-multi`, `mqar`, `niah-multivalue`, `variable-tracking`, `frequent-words`, `two-hop`),
 * `arithmetic`, `lm`, `suite` (the long-context suite: option `member`, one of `SUITE_MEMBERS` or
 * `mixture`, and `contextChars`). Options are validated: a field the task does not
 * know, of the wrong type or out of range throws.
 *
 * @example
 * ```ts
 * const task = createTask('retrieval', { variant: 'niah-multi', contextChars: 2048, depth: 0.25 });
 * const example = task.example(0, 17);
 * task.verify(example, example.target); // { correct: true }
 * ```
 * @throws LetheError `E_ARG` (argument `name`, listing the valid names) for an unknown name;
 *   `E_ARG` naming the field for a bad option.
 */
export function createTask<N extends TaskName>(
  name: N,
  options?: TaskOptionsByName[N],
): TaskByName[N];
export function createTask(name: string, options?: unknown): Task;
export function createTask(name: string, options?: unknown): Task {
  switch (name) {
    case 'countdown':
      return countdownTask(options as CountdownOptionsInput);
    case 'retrieval':
      return retrievalTask(options as RetrievalOptionsInput);
    case 'arithmetic':
      return arithmeticTask(options as ArithmeticOptionsInput);
    case 'lm':
      return languageModelTask(options as LanguageModelOptionsInput);
    case 'suite':
      return suiteTask(options as SuiteOptionsInput);
    default:
      throw new LetheError(
        'E_ARG',
        `unknown task ${JSON.stringify(name)}; valid names: ${TASK_NAMES.join(', ')}`,
        'name',
      );
  }
}
