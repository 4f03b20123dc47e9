import { LetheError } from '@lethe/core';

/**
 * Holm's step-down adjustment of `pValues` for testing them together (Holm, 1979): with the
 * p-values sorted ascending, `p̃₍ᵢ₎ = max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎)`, returned in the
 * input's order. Rejecting the hypotheses whose adjusted p-value is at most α keeps the chance of
 * any false rejection (the family-wise error rate) at most α, whatever the tests' dependence —
 * what a leaderboard that compares many policies against one baseline needs.
 *
 * @example
 * ```ts
 * holmAdjust([0.01, 0.04, 0.03]); // [0.03, 0.06, 0.06]
 * ```
 * @throws LetheError `E_ARG` naming `pValues[i]` for a value outside [0, 1] (or not a number).
 */
export function holmAdjust(pValues: readonly number[]): number[] {
  pValues.forEach((p, i) => {
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
      throw new LetheError('E_ARG', `must be a p-value in [0, 1], got ${p}`, `pValues[${i}]`);
    }
  });
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}
