import { assertInteger, LetheError } from '@lethe/core';
import type { GenerationTask, TaskExample } from '@lethe/eval';
import { SeededRandom } from '@lethe/eval';
import {
  type BatchProvider,
  type NextTokenBatch,
  nextTokenBatch,
  type SftExample,
} from '@lethe/model';
import { type LossOn, taskSequence } from './task-sequence';

/** Options of {@link generationBatches}. */
export interface GenerationBatchesOptions {
  /** Task seed of the training examples (see `trainingSeed`). */
  readonly seed: number;
  /** Sequences per batch. */
  readonly batchSize: number;
  /**
   * Updates whose examples are drawn together and sorted by length, so that each batch holds
   * sequences of similar length and pads less (default 1: no sorting).
   */
  readonly bucketSteps?: number;
  /**
   * Prompts never trained on (the held-out evaluation prompts): an example with one of them is
   * replaced by example `index + k · REPLACEMENT_STRIDE` (k = 1, 2, …) of the same seed.
   */
  readonly exclude?: ReadonlySet<string>;
  /** The tokens the loss falls on (default `completion`; see {@link taskSequence}). */
  readonly lossOn?: LossOn;
}

/** Index shift of a replacement example; training never reaches index 2^40 otherwise. */
export const REPLACEMENT_STRIDE = 2 ** 40;

/** How many replacements one slot may try before giving up. */
const MAX_REPLACEMENTS = 64;

/**
 * Batches of fresh task examples, each trained on once, as {@link taskSequence} builds them
 * (loss on the target tokens only, or with `lossOn: 'all'` on every token). Updates are grouped `bucketSteps` at a time: group `g`
 * takes examples `g · bucketSteps · batchSize …` of `options.seed` in index order, sorts them
 * by length (ties by index) and cuts them into `bucketSteps` batches, which its updates take
 * in an order shuffled by the group's own stream (`pretrain/buckets`). With `bucketSteps` 1,
 * slot `j` of update `step` is example `step · batchSize + j`. The batch of an update depends
 * only on the seed and the step, so a resumed run sees the same data as an uninterrupted one.
 *
 * @throws LetheError `E_ARG` for a bad batch size, bucket count or seed; (when called)
 *   `E_STATE` when {@link MAX_REPLACEMENTS} replacements of an excluded prompt are all excluded
 *   too.
 */
export function generationBatches(
  task: GenerationTask,
  options: GenerationBatchesOptions,
): BatchProvider<NextTokenBatch> {
  assertInteger(options.batchSize, 'batchSize', 1);
  assertInteger(options.seed, 'seed', 0);
  const bucketSteps = options.bucketSteps ?? 1;
  assertInteger(bucketSteps, 'bucketSteps', 1);
  const { seed, batchSize, exclude } = options;
  const tokenizer = task.tokenizer;
  const padId = tokenizer.padId ?? 0;
  const exampleAt = (index: number): TaskExample => {
    let example = task.example(seed, index);
    for (let k = 1; exclude?.has(example.prompt); k++) {
      if (k > MAX_REPLACEMENTS) {
        throw new LetheError(
          'E_STATE',
          `example ${index} of seed ${seed} and ${MAX_REPLACEMENTS} replacements all repeat held-out prompts`,
          'exclude',
        );
      }
      example = task.example(seed, index + k * REPLACEMENT_STRIDE);
    }
    return example;
  };
  // The batches of the last group drawn: consecutive updates share a group.
  let cached: { group: number; batches: SftExample[][] } | undefined;
  const groupBatches = (group: number): SftExample[][] => {
    if (cached?.group === group) return cached.batches;
    const size = bucketSteps * batchSize;
    const sequences = Array.from({ length: size }, (_, j) =>
      taskSequence(task, exampleAt(group * size + j), options.lossOn),
    );
    if (bucketSteps === 1) {
      cached = { group, batches: [sequences] };
      return cached.batches;
    }
    const order = sequences
      .map((sequence, j) => ({ sequence, j }))
      .sort((a, b) => a.sequence.tokens.length - b.sequence.tokens.length || a.j - b.j)
      .map(({ sequence }) => sequence);
    const chunks = Array.from({ length: bucketSteps }, (_, b) =>
      order.slice(b * batchSize, (b + 1) * batchSize),
    );
    const batches = SeededRandom.forExample('pretrain/buckets', seed, group).shuffle(chunks);
    cached = { group, batches };
    return batches;
  };
  return (step) => {
    const batch = groupBatches(Math.floor(step / bucketSteps))[step % bucketSteps]!;
    return nextTokenBatch(batch, { padId, vocabSize: tokenizer.vocabSize });
  };
}
