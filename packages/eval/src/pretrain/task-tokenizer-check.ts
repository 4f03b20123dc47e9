import type { CharTokenizer } from '@lethe/model';
import { LetheError } from '@lethe/tensor';
import type { Task } from '../tasks/task';

/**
 * Checks that a model directory's tokenizer is the task's own: a task model trained for
 * another task (another alphabet) would read the prompts as other characters.
 *
 * @param source - the `tokenizer.json` file named in the error.
 * @throws LetheError `E_CHECKPOINT` naming `source` when the alphabets differ.
 */
export function checkTaskTokenizer(
  tokenizer: CharTokenizer,
  task: Pick<Task, 'name' | 'tokenizer'>,
  source: string,
): void {
  const expected = (task.tokenizer.toJSON() as { alphabet?: unknown }).alphabet;
  const alphabet = tokenizer.alphabet.join('');
  if (alphabet !== expected) {
    throw new LetheError(
      'E_CHECKPOINT',
      `holds the alphabet ${JSON.stringify(alphabet)}, not the ${task.name} task's ${JSON.stringify(expected)}: the model was trained for another task`,
      source,
    );
  }
}
