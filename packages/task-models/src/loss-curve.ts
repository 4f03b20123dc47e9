import type { TaskModelLossCurve } from './manifest';

/** Updates per point of a manifest's loss curve (`training.lossCurve.every`). */
export const LOSS_CURVE_EVERY = 50;

/**
 * `losses` (entry `s − 1` is update `s`'s loss, `null` where a record lost it) with update
 * `step`'s loss set and every later entry dropped: a run resumed from an earlier checkpoint makes
 * those updates again. Updates missing before `step` (a state from before losses were recorded)
 * are `null`. Losses are kept to 6 decimals.
 */
export function withLoss(
  losses: readonly (number | null)[],
  step: number,
  loss: number,
): (number | null)[] {
  const kept: (number | null)[] = losses.slice(0, step - 1);
  while (kept.length < step - 1) kept.push(null);
  kept.push(Math.round(loss * 1e6) / 1e6);
  return kept;
}

/**
 * The mean loss over each window of `every` updates (the last one possibly shorter), or
 * `undefined` when an update's loss is missing: how a run's loss fell, small enough for the
 * manifest, where the progress bar showed it only while it ran.
 *
 * @example
 * ```ts
 * lossCurve([4, 2, 1], 2); // { every: 2, means: [3, 1] }
 * ```
 */
export function lossCurve(
  losses: readonly (number | null)[],
  every: number = LOSS_CURVE_EVERY,
): TaskModelLossCurve | undefined {
  if (losses.some((loss) => loss === null)) return undefined;
  const means: number[] = [];
  for (let start = 0; start < losses.length; start += every) {
    const window = losses.slice(start, start + every) as number[];
    const mean = window.reduce((sum, loss) => sum + loss, 0) / window.length;
    means.push(Math.round(mean * 1e5) / 1e5);
  }
  return { every, means };
}
