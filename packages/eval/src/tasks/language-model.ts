import { LetheError } from '@lethe/core';
import { intOption, optionFields } from './options';
import { SeededRandom } from './seeded';
import { storyDocument } from './story-grammar';
import type { PerplexityTask } from './task';
import { taskTokenizer } from './tokenizers';

/** Resolved options of the language-modelling task (see {@link languageModelTask}). */
export interface LanguageModelOptions {
  /** Length of each held-out document, in characters = tokens (default 1024). */
  readonly documentChars: number;
  /** Length of the training text, in characters = tokens (default 262144, or documentChars if larger). */
  readonly trainingChars: number;
}

/** Options accepted by {@link languageModelTask}; every field is optional. */
export type LanguageModelOptionsInput = Partial<LanguageModelOptions>;

/** Defaults of {@link LanguageModelOptions}. */
export const LANGUAGE_MODEL_DEFAULTS: LanguageModelOptions = {
  documentChars: 1024,
  trainingChars: 262_144,
};

/**
 * Language modelling on a generated corpus: story documents from a seeded grammar
 * ({@link storyDocument}) whose recurring names make long-range context matter.
 *
 * - `document(seed, index)`: held-out document `index`, exactly `documentChars` long, from the
 *   stream `lm/held-out` of `seed`.
 * - `trainingText(seed)`: training documents 0, 1, … of the separate stream `lm/train` of
 *   `seed`, each `documentChars` long, joined by newlines and cut to exactly `trainingChars`.
 *
 * Training and held-out documents come from independent streams, so no held-out document is
 * part of the training text (they share only the grammar). Start of `document(0, 0)`:
 * `this is a story about fote, toko and tafi. fote watched the dark hill inside the lamp. the
 * old stone slept quickly. the dog of tafi slept again. …`
 *
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function languageModelTask(
  options?: LanguageModelOptionsInput,
): PerplexityTask<LanguageModelOptions> {
  const resolved = resolveLanguageModelOptions(options);
  const tokenizer = taskTokenizer('lm');

  const document = (seed: number, index: number): string =>
    storyDocument(SeededRandom.forExample('lm/held-out', seed, index), resolved.documentChars);

  const trainingText = (seed: number): string => {
    const parts: string[] = [];
    let length = -1;
    for (let index = 0; length < resolved.trainingChars; index++) {
      const part = storyDocument(
        SeededRandom.forExample('lm/train', seed, index),
        resolved.documentChars,
      );
      parts.push(part);
      length += 1 + part.length;
    }
    return parts.join('\n').slice(0, resolved.trainingChars);
  };

  return { kind: 'perplexity', name: 'lm', options: resolved, tokenizer, document, trainingText };
}

function resolveLanguageModelOptions(options: unknown): LanguageModelOptions {
  const fields = optionFields(options, Object.keys(LANGUAGE_MODEL_DEFAULTS), 'lm');
  const d = LANGUAGE_MODEL_DEFAULTS;
  const documentChars = intOption(fields, 'documentChars', d.documentChars, 16, 10_000_000);
  const trainingChars = intOption(
    fields,
    'trainingChars',
    Math.max(d.trainingChars, documentChars),
    1,
    100_000_000,
  );
  if (trainingChars < documentChars) {
    throw new LetheError(
      'E_ARG',
      `must be at least documentChars (${documentChars}), got ${trainingChars}`,
      'trainingChars',
    );
  }
  return { documentChars, trainingChars };
}
