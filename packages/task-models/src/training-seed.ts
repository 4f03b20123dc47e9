import { LetheError } from '@lethe/core';

/**
 * Offset between a pretraining seed and the task seed its training examples are drawn from.
 *
 * Convention: the harness evaluates examples `0 … examplesPerCell − 1` of each sweep seed
 * (`task.example(seed, i)`), and sweep seeds are small (0, 1, 2, …). Task models are trained on
 * examples of the task seed `TRAINING_SEED_OFFSET + seed` (indices 0, 1, 2, … in step order), so
 * their random streams never meet the streams of an evaluation seed below this offset. Seeds at
 * or above it are reserved for training and should not be used in sweeps. The LM task trains
 * on `trainingText(TRAINING_SEED_OFFSET + seed)`, whose stream (`lm/train`) is separate from the
 * held-out documents (`lm/held-out`) at every seed anyway.
 */
export const TRAINING_SEED_OFFSET = 1_000_000;

/**
 * The task seed of the training examples of pretraining seed `seed`:
 * `TRAINING_SEED_OFFSET + seed`.
 *
 * @throws LetheError `E_ARG` naming `seed` unless it is a non-negative integer that keeps the
 *   sum a safe integer.
 */
export function trainingSeed(seed: number): number {
  if (
    !(Number.isSafeInteger(seed) && seed >= 0 && Number.isSafeInteger(seed + TRAINING_SEED_OFFSET))
  ) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${seed}`, 'seed');
  }
  return TRAINING_SEED_OFFSET + seed;
}

/** Whether `taskSeed` lies in the range reserved for training examples. */
export function isTrainingSeed(taskSeed: number): boolean {
  return taskSeed >= TRAINING_SEED_OFFSET;
}
