import { LetheError } from '@lethe/core';
import { CharTokenizer, type DecoderModel, type Tokenizer } from '@lethe/model';
import type { Task } from '../tasks/task';

/**
 * Checks that a policy's own model (NGC's RL-trained LM) can run the cells of `task`: its
 * tokenizer extends the task's (the same tokens first, e.g. with an interoception tag's characters
 * after them), or, without a tokenizer of its own, its vocabulary covers the task's.
 *
 * @param dir the policy directory, for the message.
 * @throws LetheError `E_CHECKPOINT` naming `dir` when the model was trained for another task.
 */
export function checkPolicyTokenizer(
  tokenizer: Tokenizer | undefined,
  model: DecoderModel,
  task: Task,
  dir: string,
): void {
  const fail = (why: string): never => {
    throw new LetheError(
      'E_CHECKPOINT',
      `holds a model for another task than ${task.name}: ${why}`,
      dir,
    );
  };
  if (tokenizer === undefined) {
    const vocab = model.config.vocab_size;
    if (vocab < task.tokenizer.vocabSize) {
      fail(
        `its vocabulary (${vocab}) does not cover the task's ${task.tokenizer.vocabSize} tokens`,
      );
    }
    return;
  }
  if (tokenizer instanceof CharTokenizer && task.tokenizer instanceof CharTokenizer) {
    const own = tokenizer.alphabet;
    const expected = task.tokenizer.alphabet;
    if (!(own.length >= expected.length && expected.every((symbol, i) => own[i] === symbol))) {
      fail(
        `its alphabet ${JSON.stringify(own.join(''))} does not extend the task's ${JSON.stringify(expected.join(''))}`,
      );
    }
    return;
  }
  if (JSON.stringify(tokenizer.toJSON()) !== JSON.stringify(task.tokenizer.toJSON())) {
    fail("its tokenizer is not the task's");
  }
}
