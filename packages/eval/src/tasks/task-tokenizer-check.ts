import { LetheError } from '@lethe/core';
import { CharTokenizer, type Tokenizer } from '@lethe/model';
import type { Task } from '../tasks/task';

/**
 * Checks that a model directory's tokenizer is the task's own: the same character tokenizer
 * (the task's alphabet), or for a task with a Hugging Face tokenizer (the suite's BPE) the same
 * tokenizer, file for file. A task model trained for another task would read the prompts as
 * other tokens; a directory with another kind of tokenizer is not the task's model.
 *
 * @param source - the `tokenizer.json` file named in the error.
 * @throws LetheError `E_CHECKPOINT` naming `source` when the tokenizer is of another kind or
 *   differs from the task's.
 */
export function checkTaskTokenizer(
  tokenizer: Tokenizer,
  task: Pick<Task, 'name' | 'tokenizer'>,
  source: string,
): void {
  if (!(task.tokenizer instanceof CharTokenizer)) {
    if (JSON.stringify(tokenizer.toJSON()) !== JSON.stringify(task.tokenizer.toJSON())) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is not the ${task.name} task's tokenizer: the model was trained for another task or tokenizer`,
        source,
      );
    }
    return;
  }
  const expected = task.tokenizer.alphabet.join('');
  if (!(tokenizer instanceof CharTokenizer)) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is not a character tokenizer, not the ${task.name} task's (alphabet ${JSON.stringify(expected)})`,
      source,
    );
  }
  const alphabet = tokenizer.alphabet.join('');
  if (alphabet !== expected) {
    throw new LetheError(
      'E_CHECKPOINT',
      `holds the alphabet ${JSON.stringify(alphabet)}, not the ${task.name} task's ${JSON.stringify(expected)}: the model was trained for another task`,
      source,
    );
  }
}
