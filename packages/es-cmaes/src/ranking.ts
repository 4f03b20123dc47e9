import { LetheError } from '@lethe/core';

/**
 * The ranking of a generation: indices of `fitness` from best (smallest) to worst.
 *
 * NaN fitness values rank last, after +Infinity, in index order: a failed evaluation is
 * treated as the worst candidate of its generation (with active CMA it then gets a negative
 * weight, pushing the distribution away from it). Ties keep index order.
 *
 * @throws LetheError `E_ARG` naming `fitness[i]` for an entry that is not a number, or
 * `fitness` when every entry is NaN (nothing to rank).
 */
export function rankFitness(fitness: ArrayLike<number>): Int32Array {
  const n = fitness.length;
  let finiteOrInfinite = 0;
  for (let i = 0; i < n; i++) {
    const f = fitness[i];
    if (typeof f !== 'number') {
      throw new LetheError('E_ARG', `must be a number, got ${typeof f}`, `fitness[${i}]`);
    }
    if (!Number.isNaN(f)) finiteOrInfinite++;
  }
  if (n > 0 && finiteOrInfinite === 0) {
    throw new LetheError('E_ARG', 'every fitness value is NaN', 'fitness');
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const fa = fitness[a]!;
    const fb = fitness[b]!;
    const na = Number.isNaN(fa);
    const nb = Number.isNaN(fb);
    if (na || nb) return na === nb ? a - b : na ? 1 : -1;
    return fa < fb ? -1 : fa > fb ? 1 : a - b;
  });
  return Int32Array.from(order);
}
