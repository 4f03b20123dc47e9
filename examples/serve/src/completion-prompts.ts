import { invalidRequest } from './api-error';
import { MAX_CHOICES } from './request-schemas';

/** One prompt of a completion request: its text or token ids, and the field it came from. */
export interface PromptEntry {
  readonly prompt: string | Int32Array;
  /** `prompt`, or `prompt.<i>` in a list. */
  readonly param: string;
}

/**
 * The prompts of a completion body's `prompt`: a text, a list of token ids, or a list of either
 * (at most {@link MAX_CHOICES}). Every element is checked, and an error names the one at fault
 * (`prompt.3` for the fourth id of a single token prompt, `prompt.1.3` in a list of them).
 *
 * @throws ApiError 400 naming the element: an id that is not an integer in `[0, vocab)`, a list
 *   that mixes kinds, an empty list or prompt, too many prompts.
 */
export function completionPrompts(raw: string | readonly unknown[], vocab: number): PromptEntry[] {
  if (typeof raw === 'string') return [{ prompt: raw, param: 'prompt' }];
  if (raw.length === 0) throw invalidRequest('prompt', 'prompt: must not be an empty list');
  if (typeof raw[0] === 'number')
    return [{ prompt: tokenIds(raw, 'prompt', vocab), param: 'prompt' }];
  if (raw.length > MAX_CHOICES) {
    throw invalidRequest('prompt', `prompt: at most ${MAX_CHOICES} prompts, got ${raw.length}`);
  }
  const textList = typeof raw[0] === 'string';
  return raw.map((entry, i) => {
    const param = `prompt.${i}`;
    if (textList && typeof entry === 'string') return { prompt: entry, param };
    if (!textList && Array.isArray(entry)) return { prompt: tokenIds(entry, param, vocab), param };
    throw invalidRequest(
      param,
      `${param}: must be ${textList ? 'a string, as the first prompt is' : 'a list of token ids, as the first prompt is'}`,
      'invalid_type',
    );
  });
}

/** `ids` as token ids of the vocabulary, or a 400 naming the first element at fault. */
function tokenIds(ids: readonly unknown[], param: string, vocab: number): Int32Array {
  if (ids.length === 0) throw invalidRequest(param, `${param}: must not be an empty list`);
  const out = new Int32Array(ids.length);
  ids.forEach((id, j) => {
    if (!(typeof id === 'number' && Number.isInteger(id) && id >= 0 && id < vocab)) {
      throw invalidRequest(
        `${param}.${j}`,
        `${param}.${j}: ${JSON.stringify(id)} is not a token id (an integer in [0, ${vocab}))`,
      );
    }
    out[j] = id;
  });
  return out;
}
