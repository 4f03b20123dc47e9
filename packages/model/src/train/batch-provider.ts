import { assertInteger, LetheError } from '@lethe/core';
import type { Rng } from '@lethe/tensor';
import {
  type NextTokenBatch,
  type NextTokenBatchOptions,
  nextTokenBatch,
  type SftExample,
  validateExamples,
} from './next-token-batch';

/** What a trainer needs to know about any batch: how many tokens it trains on. */
export interface TrainBatch {
  /** Number of trained tokens, for the tokens/s figure in progress reports. */
  readonly tokens: number;
}

/**
 * Produces the batch of update `step` (0-based). `rng` is the trainer's generator forked for that
 * step, so a provider that draws only from `rng` and otherwise depends only on `step` gives the
 * same batch on every run and after a resume. The trainer takes ownership of the batch and
 * disposes every tensor reachable from it (arrays and plain-object fields) after the update.
 */
export type BatchProvider<B extends TrainBatch> = (step: number, rng: Rng) => B;

/** Options of {@link sampledBatches}. */
export interface SampledBatchesOptions extends NextTokenBatchOptions {
  /** Sequences per batch (integer ≥ 1). */
  readonly batchSize: number;
}

/**
 * A {@link BatchProvider} that draws `batchSize` examples uniformly with replacement from
 * `examples` each step (indices `⌊u·n⌋` from `rng.uniform`) and packs them with
 * {@link nextTokenBatch}. Examples are validated once, here.
 *
 * @throws LetheError `E_ARG` / `E_SHAPE` as {@link nextTokenBatch}, or `E_ARG` for `batchSize`.
 * @example
 * ```ts
 * const batches = sampledBatches(examples, { batchSize: 8, padId: 0, vocabSize: 256 });
 * const batch = batches(0, new Rng(1).fork(0));
 * ```
 */
export function sampledBatches(
  examples: readonly SftExample[],
  options: SampledBatchesOptions,
): BatchProvider<NextTokenBatch> {
  assertInteger(options.batchSize, 'batchSize', 1);
  if (examples.length === 0) throw new LetheError('E_ARG', 'no examples', 'examples');
  validateExamples(examples, options);
  const pool = [...examples];
  return (_step, rng) => {
    const picks = Array.from(
      rng.uniform(options.batchSize),
      (u) => pool[Math.floor(u * pool.length)]!,
    );
    return nextTokenBatch(picks, options);
  };
}
