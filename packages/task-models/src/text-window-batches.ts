import { assertInteger, LetheError } from '@lethe/core';
import type { PerplexityTask } from '@lethe/eval';
import { encodeText } from '@lethe/eval';
import {
  type BatchProvider,
  type NextTokenBatch,
  nextTokenBatch,
  type SftExample,
} from '@lethe/model';

/** Options of {@link textWindowBatches}. */
export interface TextWindowBatchesOptions {
  /** Seed of the training text (`task.trainingText(seed)`; see `trainingSeed`). */
  readonly seed: number;
  /** Windows per batch. */
  readonly batchSize: number;
  /** Tokens per window (≥ 2), BOS included when a window starts a document. */
  readonly window: number;
}

/**
 * Next-token batches over the task's training text. The text is split into its documents
 * (newline-separated), each encoded as the harness encodes held-out documents (BOS first);
 * each row of update `step` is a window of `window` tokens at a uniformly drawn document and
 * offset, both drawn from the step's generator (so batches depend only on the seed and the
 * step). Every token of a window but the first is a target.
 *
 * @throws LetheError `E_ARG` for a bad option or a training text without a document of at
 *   least 2 tokens.
 */
export function textWindowBatches(
  task: PerplexityTask,
  options: TextWindowBatchesOptions,
): BatchProvider<NextTokenBatch> {
  assertInteger(options.batchSize, 'batchSize', 1);
  assertInteger(options.window, 'window', 2);
  const tokenizer = task.tokenizer;
  const documents = task
    .trainingText(options.seed)
    .split('\n')
    .map((text) => encodeText(tokenizer, text))
    .filter((ids) => ids.length >= 2);
  if (documents.length === 0) {
    throw new LetheError('E_ARG', 'has no document of 2 tokens or more', 'trainingText');
  }
  const { batchSize, window } = options;
  const padId = tokenizer.padId ?? 0;
  return (_step, rng) => {
    const draws = rng.uniform(2 * batchSize);
    const rows: SftExample[] = [];
    for (let b = 0; b < batchSize; b++) {
      const doc = documents[Math.floor(draws[2 * b]! * documents.length)]!;
      const starts = Math.max(1, doc.length - window + 1);
      const start = Math.floor(draws[2 * b + 1]! * starts);
      rows.push({ tokens: doc.subarray(start, start + window) });
    }
    return nextTokenBatch(rows, { padId, vocabSize: tokenizer.vocabSize });
  };
}
