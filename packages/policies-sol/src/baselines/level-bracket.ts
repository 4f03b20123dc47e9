import { LetheError } from '@lethe/core';

/**
 * Absolute distance under which a value counts as equal to a level. Levels are budget units in
 * (0, 1]; the tolerance absorbs the rounding of running sums of levels (e.g. 16 × 0.1).
 */
export const LEVEL_TOLERANCE = 1e-9;

/**
 * The two adjacent levels of one axis around a value, and the mix of them that averages to it.
 * A value within {@link LEVEL_TOLERANCE} of a level, or outside the levels' range, has a single
 * level (`lower === upper`, the level itself or the nearest extreme) and weight 0.
 */
export interface LevelBracket {
  /** Index of the nearest level below the value (or the value's own level). */
  readonly lower: number;
  /** Index of the nearest level above the value (or the value's own level). */
  readonly upper: number;
  /**
   * `w = (x − lower) / (upper − lower)` in (0, 1) for a value strictly between two levels: the
   * share of `upper` in a mix of the two levels whose mean is `x`; 0 when `lower === upper`.
   */
  readonly weight: number;
}

/**
 * Brackets `value` by the ascending `levels` of one axis (see {@link LevelBracket}).
 *
 * @example
 * ```ts
 * bracketLevels([0.25, 0.5, 1], 0.75); // { lower: 1, upper: 2, weight: 0.5 }
 * bracketLevels([0.25, 0.5, 1], 0.5); // { lower: 1, upper: 1, weight: 0 }
 * bracketLevels([0.25, 0.5, 1], 0.1); // { lower: 0, upper: 0, weight: 0 }
 * ```
 *
 * @throws LetheError `E_ARG` naming `levels` unless it is a non-empty, strictly ascending list
 *   of finite numbers; naming `value` unless it is finite.
 */
export function bracketLevels(levels: readonly number[], value: number): LevelBracket {
  checkLevels(levels);
  if (!Number.isFinite(value)) {
    throw new LetheError('E_ARG', `must be a finite number, got ${value}`, 'value');
  }
  const last = levels.length - 1;
  const own = levels.findIndex((level) => Math.abs(level - value) <= LEVEL_TOLERANCE);
  if (own >= 0) return { lower: own, upper: own, weight: 0 };
  if (value < levels[0]!) return { lower: 0, upper: 0, weight: 0 };
  if (value > levels[last]!) return { lower: last, upper: last, weight: 0 };
  let upper = 1;
  while (levels[upper]! < value) upper += 1;
  const lower = upper - 1;
  const low = levels[lower]!;
  return { lower, upper, weight: (value - low) / (levels[upper]! - low) };
}

function checkLevels(levels: readonly number[]): void {
  if (!Array.isArray(levels) || levels.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of levels', 'levels');
  }
  levels.forEach((level, i) => {
    if (!(Number.isFinite(level) && (i === 0 || level > levels[i - 1]!))) {
      throw new LetheError(
        'E_ARG',
        `must be strictly ascending finite numbers, got ${level} at ${i}`,
        'levels',
      );
    }
  });
}
