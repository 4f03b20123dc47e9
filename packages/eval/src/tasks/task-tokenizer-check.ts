import { LetheError } from '@lethe/core';
import { CharTokenizer, type Tokenizer } from '@lethe/model';
import type { Task } from '../tasks/task';

/**
 * Checks that a model directory's tokenizer is the task's own: the tasks' character tokenizer
 * with the task's alphabet. A task model trained for another task (another alphabet) would
 * read the prompts as other characters; a directory with another kind of tokenizer (a Hugging
 * Face one) is not a task model.
 *
 * @param source - the `tokenizer.json` file named in the error.
 * @throws LetheError `E_CHECKPOINT` naming `source` when the tokenizer is not a character
 *   tokenizer or the alphabets differ.
 */
export function checkTaskTokenizer(
  tokenizer: Tokenizer,
  task: Pick<Task, 'name' | 'tokenizer'>,
  source: string,
): asserts tokenizer is CharTokenizer {
  const expected = (task.tokenizer.toJSON() as { alphabet?: unknown }).alphabet;
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
