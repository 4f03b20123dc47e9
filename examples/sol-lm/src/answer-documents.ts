import { LetheError } from '@lethe/core';
import { encodeText, type GenerationTask, planGeneration } from '@lethe/eval';
import { generate } from '@lethe/model';
import type { PrefixedDocument } from '@lethe/policies-sol/train';
import { trainingSeed } from '@lethe/task-models';
import { heldOutPrompts, type TaskModel } from '@lethe/task-models/node';

/** Held-out prompts never trained on: the first this many of evaluation seed 0. */
export const HELD_OUT_EXAMPLES = 512;

/** Prompts answered per batch. */
const ANSWER_BATCH = 64;

/** A generation task's training documents and what was left out. */
export interface AnswerDocuments {
  readonly documents: PrefixedDocument[];
  /** Training prompts whose answer is shorter than `horizon + 1` tokens (no episode fits). */
  readonly tooShort: number;
  /** Training prompts skipped because a held-out prompt is the same. */
  readonly heldOut: number;
}

/**
 * The controller's training documents on a generation task: the prompts of the task's training
 * stream for `seed` (`trainingSeed(seed)`; a prompt equal to one of the first
 * {@link HELD_OUT_EXAMPLES} held-out prompts of seed 0 is skipped), each followed by the frozen
 * model's own dense greedy answer — the token path a deployment decodes — up to the task's stop
 * text. Each document's episodes start anywhere in its answer: its prefix is drawn from
 * `[prompt length, length − horizon − 1]`, so the prompt and the answer so far are always
 * prefilled densely and the `horizon` steps after them are teacher-forced under the controller.
 * Answers shorter than `horizon + 1` tokens are left out (counted).
 *
 * @throws LetheError `E_ARG` naming `model` when its task is not a generation task, `count`
 *   unless it is an integer ≥ 1, or `horizon` when no answer is long enough.
 */
export async function answerDocuments(
  taskModel: TaskModel,
  seed: number,
  count: number,
  horizon: number,
): Promise<AnswerDocuments> {
  const { task, model } = taskModel;
  if (task.kind !== 'generation') {
    throw new LetheError('E_ARG', `is a ${task.name} model, not a generation task's`, 'model');
  }
  if (!(Number.isInteger(count) && count >= 1)) {
    throw new LetheError('E_ARG', `must be an integer ≥ 1, got ${count}`, 'count');
  }
  const prompts = trainingPrompts(task, seed, count);
  const { stop } = planGeneration(task, 0, 1, 0);
  const documents: PrefixedDocument[] = [];
  let tooShort = 0;
  for (let at = 0; at < prompts.prompts.length; at += ANSWER_BATCH) {
    const batch = prompts.prompts.slice(at, at + ANSWER_BATCH);
    const result = await generate({
      model,
      prompts: batch,
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      stop,
    });
    batch.forEach((prompt, i) => {
      const answer = result.tokens[i]!;
      if (answer.length < horizon + 1) {
        tooShort += 1;
        return;
      }
      const tokens = new Int32Array(prompt.length + answer.length);
      tokens.set(prompt);
      tokens.set(answer, prompt.length);
      documents.push({
        tokens,
        prefix: { min: prompt.length, max: tokens.length - horizon - 1 },
      });
    });
  }
  if (documents.length === 0) {
    throw new LetheError(
      'E_ARG',
      `no answer of the ${count} training prompts is longer than ${horizon} tokens`,
      'horizon',
    );
  }
  return { documents, tooShort, heldOut: prompts.heldOut };
}

/** The first `count` training prompts of `seed` not among the held-out ones, encoded. */
function trainingPrompts(
  task: GenerationTask,
  seed: number,
  count: number,
): { prompts: Int32Array[]; heldOut: number } {
  const excluded = heldOutPrompts(task, 0, HELD_OUT_EXAMPLES);
  const source = trainingSeed(seed);
  const prompts: Int32Array[] = [];
  let heldOut = 0;
  for (let index = 0; prompts.length < count; index++) {
    const { prompt } = task.example(source, index);
    if (excluded.has(prompt)) {
      heldOut += 1;
      continue;
    }
    prompts.push(encodeText(task.tokenizer, prompt));
  }
  return { prompts, heldOut };
}
