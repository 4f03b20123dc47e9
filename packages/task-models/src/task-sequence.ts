import type { GenerationTask, TaskExample } from '@lethe/eval';
import { encodeText } from '@lethe/eval';
import type { SftExample } from '@lethe/model';

/** Which tokens of a generation example the loss falls on. */
export type LossOn = 'completion' | 'all';

/**
 * The training sequence of a generation example, exactly as the harness will see it: the
 * prompt as `encodeText` encodes it (BOS first when the tokenizer has one), then the reference
 * completion and EOS (when the tokenizer has one). With `lossOn` `completion` (the default)
 * `promptLength` covers the BOS and the prompt, so the loss falls on the target tokens and the
 * EOS only; with `all` it falls on every token after the first, the prompt's too (a language
 * model's loss: the copies a long prompt holds teach the copying its answer needs).
 */
export function taskSequence(
  task: GenerationTask,
  example: TaskExample,
  lossOn: LossOn = 'completion',
): SftExample {
  const tokenizer = task.tokenizer;
  const prompt = encodeText(tokenizer, example.prompt);
  const target = tokenizer.encode(example.target, { addEos: tokenizer.eosId !== undefined });
  const tokens = new Int32Array(prompt.length + target.length);
  tokens.set(prompt, 0);
  tokens.set(target, prompt.length);
  return { tokens, promptLength: lossOn === 'all' ? 0 : prompt.length };
}
