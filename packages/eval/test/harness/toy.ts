import { CharTokenizer, type DecoderModel, type Tokenizer } from '@lethe/model';
import { matrixModel } from '@lethe/model/testing';
import type { GenerationTask, PerplexityTask, TaskExample } from '../../src/tasks/task';

const ALPHABET = 'abcdefgh.';
const chars = CharTokenizer.fromText(ALPHABET);

/** The toy tokenizer: the character tokenizer without an EOS id, so only the stop text stops. */
export const toyTokenizer: Tokenizer = {
  vocabSize: chars.vocabSize,
  bosId: chars.bosId,
  padId: chars.padId,
  encode: (text, options) => chars.encode(text, options),
  decode: (ids, options) => chars.decode(ids, options),
  toJSON: () => chars.toJSON(),
};

/** Options of the toy generation task. */
export interface ToyOptions {
  readonly promptChars?: number;
  readonly maxNewTokens?: number;
  /** Default `..`. */
  readonly stopText?: string;
}

/**
 * A toy generation task: the prompt is a seeded string of letters, the target its first
 * letter; a completion is correct when that letter is among its first 8 characters. Stops at `stopText`.
 */
export function toyTask(options: ToyOptions = {}): GenerationTask<ToyOptions> {
  const promptChars = options.promptChars ?? 4;
  return {
    kind: 'generation',
    name: 'toy',
    options,
    tokenizer: toyTokenizer,
    maxNewTokens: options.maxNewTokens ?? 24,
    stopText: options.stopText ?? '..',
    example(seed: number, index: number): TaskExample {
      const letters = Array.from(
        { length: promptChars + (index % 2) },
        (_, i) => 'abcdefgh'[(seed * 7 + index * 3 + i * 5) % 8],
      ).join('');
      return { task: 'toy', seed, index, prompt: letters, target: letters[0]!, data: {} };
    },
    verify(example, completion) {
      return completion.slice(0, 8).includes(example.target)
        ? { correct: true }
        : { correct: false, reason: 'wrong first letter' };
    },
  };
}

/** A toy language-modelling task: seeded letter strings of 20–23 characters. */
export function toyLmTask(): PerplexityTask<Record<string, never>> {
  const text = (seed: number, index: number) =>
    Array.from(
      { length: 20 + (index % 4) },
      (_, i) => 'abcdefgh'[(seed + index * 5 + i * i) % 8],
    ).join('');
  return {
    kind: 'perplexity',
    name: 'toy-lm',
    options: {},
    tokenizer: toyTokenizer,
    document: text,
    trainingText: (seed) => text(seed + 1000, 0),
  };
}

/** A random tiny decoder over the toy vocabulary: the policy matrix's model (same alphabet). */
export function tinyModel(seed = 1): DecoderModel {
  return matrixModel(seed);
}

/** A clock that advances by `stepMs` at every reading (deterministic wall-time fields). */
export function steppingClock(stepMs = 5): () => number {
  let t = 0;
  return () => {
    t += stepMs;
    return t;
  };
}
