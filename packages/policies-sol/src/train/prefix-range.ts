import { assertInteger, LetheError, type Rng } from '@lethe/core';

/** Prefix lengths an input's prefix is drawn from, uniformly: integers `min … max`. */
export interface PrefixRange {
  readonly min: number;
  readonly max: number;
}

/** The largest prefix of a setting. */
export function longestPrefix(prefix: number | PrefixRange): number {
  return typeof prefix === 'number' ? prefix : prefix.max;
}

/**
 * A checked copy of a prefix setting: an integer ≥ 1, or `{ min, max }` integers with
 * `1 ≤ min ≤ max`.
 *
 * @throws LetheError `E_ARG` naming `argument`, `<argument>.min` or `<argument>.max`.
 */
export function checkPrefix(
  prefix: number | PrefixRange,
  argument = 'prefix',
): number | PrefixRange {
  if (typeof prefix === 'number') return assertInteger(prefix, argument, 1);
  if (typeof prefix !== 'object' || prefix === null) {
    throw new LetheError('E_ARG', 'must be an integer ≥ 1 or { min, max }', argument);
  }
  const min = assertInteger(prefix.min, `${argument}.min`, 1);
  const max = assertInteger(prefix.max, `${argument}.max`, min);
  return { min, max };
}

/**
 * Each input's prefix: a fixed one as it is, a range drawn from uniformly. `rng` gives one
 * uniform per input whatever the settings, so that an input's draw does not depend on the
 * others'.
 */
export function drawPrefixes(prefixes: readonly (number | PrefixRange)[], rng: Rng): number[] {
  const uniforms = rng.uniform(prefixes.length);
  return prefixes.map((prefix, i) => {
    if (typeof prefix === 'number') return prefix;
    const span = prefix.max - prefix.min + 1;
    return prefix.min + Math.min(span - 1, Math.floor(uniforms[i]! * span));
  });
}
