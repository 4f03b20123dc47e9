import { LetheError } from '@lethe/core';
import type { ExampleOutcome } from './eval-cells';

/** A method's result on the held-out set. */
export interface MethodSummary {
  readonly examples: number;
  /** Fraction correct and its standard error √(p(1 − p)/n). */
  readonly accuracy: number;
  readonly accuracySe: number;
  /** Mean peak KV entries (all layers and heads). */
  readonly meanPeak: number;
  /**
   * Eq. 7's average peak KV cache reduction: the mean over examples of the full-cache
   * reference's peak on that example divided by this method's peak on it.
   */
  readonly peakReduction: number;
  readonly meanCompletion: number;
}

/**
 * Summarises per-example outcomes against the full-cache reference run on the same examples
 * (the no-eviction baseline of eq. 7: same prompts, the reference model's own completions).
 */
export function summarize(
  outcomes: readonly ExampleOutcome[],
  reference: readonly ExampleOutcome[],
): MethodSummary {
  const n = outcomes.length;
  if (n === 0 || reference.length !== n) {
    throw new LetheError(
      'E_ARG',
      `has ${reference.length} outcomes for ${n} examples (need one per example, n ≥ 1)`,
      'reference',
    );
  }
  const accuracy = outcomes.filter((o) => o.correct).length / n;
  const mean = (f: (o: ExampleOutcome, i: number) => number): number =>
    outcomes.reduce((sum, o, i) => sum + f(o, i), 0) / n;
  return {
    examples: n,
    accuracy,
    accuracySe: Math.sqrt((accuracy * (1 - accuracy)) / n),
    meanPeak: meanPeak(outcomes),
    peakReduction: mean((o, i) => reference[i]!.peak / o.peak),
    meanCompletion: mean((o) => o.completionLength),
  };
}

/** The mean over problems of the most KV entries held at once (eq. 7's peak). */
export function meanPeak(outcomes: readonly ExampleOutcome[]): number {
  return outcomes.reduce((sum, o) => sum + o.peak, 0) / outcomes.length;
}
