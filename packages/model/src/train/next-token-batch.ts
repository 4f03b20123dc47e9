import { assertInteger, LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';

/** One training sequence for supervised fine-tuning. */
export interface SftExample {
  /** Token ids of the whole sequence (prompt followed by completion), at least 2 tokens. */
  readonly tokens: ArrayLike<number>;
  /**
   * Number of leading prompt tokens that are context only: tokens at indices `< promptLength`
   * are never targets. Default 0 (train on every next token). Must be `< tokens.length`.
   */
  readonly promptLength?: number;
}

/** How {@link nextTokenBatch} pads and checks a batch. */
export interface NextTokenBatchOptions {
  /** Token id written into padded positions of `inputs` and `targets` (integer ≥ 0). */
  readonly padId: number;
  /** When given, every token id and `padId` must lie in [0, vocabSize). */
  readonly vocabSize?: number;
  /** Padded length T; default the longest example's length − 1. Must fit every example. */
  readonly length?: number;
}

/** Teacher-forcing batch; the caller owns (and disposes) the four tensors. */
export interface NextTokenBatch {
  /** `[B, T]` int32: the tokens fed to the model (`tokens[0..n−2]`, then `padId`). */
  readonly inputs: tf.Tensor2D;
  /** `[B, T]` int32: the next token at each position (`tokens[1..n−1]`, then `padId`). */
  readonly targets: tf.Tensor2D;
  /** `[B, T]` float32: 1 where the target is trained on, 0 for padding and prompt targets. */
  readonly mask: tf.Tensor2D;
  /**
   * `[B, T]` float32: 1 at every real input position (`t < n − 1`, prompt included), 0 for
   * padding — the query rows a loss over the model's attention counts.
   */
  readonly inputMask: tf.Tensor2D;
  /** Number of trained targets (the sum of `mask`). */
  readonly tokens: number;
}

/**
 * Turns sequences into a right-padded next-token batch: row b has
 * `inputs[b, t] = tokens[t]`, `targets[b, t] = tokens[t + 1]` for `t < n − 1`, and
 * `mask[b, t] = 1` iff `t + 1 ≥ promptLength` and `t < n − 1`, and `inputMask[b, t] = 1` iff
 * `t < n − 1`.
 *
 * @throws LetheError `E_ARG` for an empty batch, a bad id or prompt length, `E_SHAPE` for a
 * sequence shorter than 2 tokens or longer than `length + 1`.
 * @example
 * ```ts
 * const batch = nextTokenBatch([{ tokens: [1, 5, 7, 2], promptLength: 2 }], { padId: 0 });
 * // inputs [[1, 5, 7]], targets [[5, 7, 2]], mask [[0, 1, 1]], inputMask [[1, 1, 1]], tokens 2
 * ```
 */
export function nextTokenBatch(
  examples: readonly SftExample[],
  options: NextTokenBatchOptions,
): NextTokenBatch {
  if (examples.length === 0) throw new LetheError('E_ARG', 'no examples', 'examples');
  validateExamples(examples, options);
  const longest = examples.reduce((most, e) => Math.max(most, e.tokens.length), 0) - 1;
  const length = options.length ?? longest;
  assertInteger(length, 'length', 1);
  if (length < longest) {
    throw new LetheError(
      'E_SHAPE',
      `${length} is shorter than the longest example (${longest})`,
      'length',
    );
  }
  const size = examples.length * length;
  const inputs = new Int32Array(size).fill(options.padId);
  const targets = new Int32Array(size).fill(options.padId);
  const mask = new Float32Array(size);
  const inputMask = new Float32Array(size);
  let tokens = 0;
  examples.forEach((example, b) => {
    const ids = example.tokens;
    const promptLength = example.promptLength ?? 0;
    for (let t = 0; t < ids.length - 1; t++) {
      inputs[b * length + t] = ids[t]!;
      targets[b * length + t] = ids[t + 1]!;
      inputMask[b * length + t] = 1;
      if (t + 1 >= promptLength) {
        mask[b * length + t] = 1;
        tokens++;
      }
    }
  });
  const shape: [number, number] = [examples.length, length];
  return {
    inputs: tf.tensor2d(inputs, shape, 'int32'),
    targets: tf.tensor2d(targets, shape, 'int32'),
    mask: tf.tensor2d(mask, shape, 'float32'),
    inputMask: tf.tensor2d(inputMask, shape, 'float32'),
    tokens,
  };
}

/**
 * Checks examples as {@link nextTokenBatch} would (ids, lengths, prompt lengths, `padId`,
 * `vocabSize`), without building tensors; for validating a whole data set up front.
 */
export function validateExamples(
  examples: readonly SftExample[],
  options: Pick<NextTokenBatchOptions, 'padId' | 'vocabSize'>,
): void {
  const { padId, vocabSize } = options;
  if (vocabSize !== undefined) assertInteger(vocabSize, 'vocabSize', 1);
  const limit = vocabSize ?? Number.POSITIVE_INFINITY;
  assertId(padId, limit, 'padId');
  examples.forEach((example, i) => {
    const ids = example.tokens;
    if (ids.length < 2) {
      throw new LetheError(
        'E_SHAPE',
        `needs ≥ 2 tokens, got ${ids.length}`,
        `examples[${i}].tokens`,
      );
    }
    for (let t = 0; t < ids.length; t++) assertId(ids[t]!, limit, `examples[${i}].tokens[${t}]`);
    if (example.promptLength !== undefined) {
      assertInteger(example.promptLength, `examples[${i}].promptLength`, 0);
      if (example.promptLength >= ids.length) {
        throw new LetheError(
          'E_ARG',
          `must be < tokens.length (${ids.length}) so that some target is trained, got ${example.promptLength}`,
          `examples[${i}].promptLength`,
        );
      }
    }
  });
}

function assertId(id: number, limit: number, argument: string): void {
  assertInteger(id, argument, 0);
  if (id >= limit)
    throw new LetheError('E_ARG', `must be < vocabSize (${limit}), got ${id}`, argument);
}
