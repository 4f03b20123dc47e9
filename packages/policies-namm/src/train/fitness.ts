import { LetheError } from '@lethe/core';

/** The mean of `values` (NaN when any is non-finite, or for none). */
export function meanOf(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) {
    if (!Number.isFinite(value)) return Number.NaN;
    sum += value;
  }
  return values.length === 0 ? Number.NaN : sum / values.length;
}

/**
 * The full-cache model's mean score on one task's prompts of a generation: the denominator of
 * that task's normalised score.
 *
 * @throws LetheError `E_ARG` naming `promptsPerTask` when the mean is not > 0 (the normalised
 *   score would be undefined, or its sign would reverse the ranking): sample more prompts per
 *   task, or prompts the model can solve.
 */
export function fullCacheMean(task: string, scores: readonly number[], generation: number): number {
  const mean = meanOf(scores);
  if (!(mean > 0)) {
    throw new LetheError(
      'E_ARG',
      `the full-cache model scores ${mean} on average on task "${task}"'s ${scores.length} prompts of generation ${generation}, so no score can be normalised by it: sample more prompts per task, or prompts the model solves with its full cache`,
      'promptsPerTask',
    );
  }
  return mean;
}

/**
 * A member's fitness (the paper's normalised performance): for each task, its mean score on the
 * task's prompts divided by the full-cache model's mean on the same prompts, averaged over the
 * tasks. NaN when any score is non-finite.
 *
 * @param scores the member's scores, per task then per prompt.
 * @param fullCacheMeans the full-cache means, per task ({@link fullCacheMean}).
 * @returns the normalised score of each task and their mean, the fitness.
 */
export function normalizedFitness(
  scores: readonly (readonly number[])[],
  fullCacheMeans: readonly number[],
): { readonly perTask: number[]; readonly fitness: number } {
  const perTask = scores.map((taskScores, t) => meanOf(taskScores) / fullCacheMeans[t]!);
  return { perTask, fitness: meanOf(perTask) };
}

/** Mean, standard deviation (population) and best (largest) of the finite `values`; NaN for none. */
export function summarize(values: readonly number[]): {
  readonly mean: number;
  readonly std: number;
  readonly best: number;
} {
  const finite = values.filter(Number.isFinite);
  const mean = meanOf(finite);
  const variance = meanOf(finite.map((v) => (v - mean) ** 2));
  return {
    mean,
    std: Math.sqrt(variance),
    best: finite.length === 0 ? Number.NaN : Math.max(...finite),
  };
}
