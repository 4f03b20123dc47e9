import { assertInteger, LetheError } from '@lethe/core';

/**
 * Checks the arguments of `Scorer.score`: `n` a non-negative integer, `x` holding at least
 * `n · features` numbers and `out` at least `n`.
 *
 * @throws LetheError `E_ARG` naming `n`, `E_SHAPE` naming `x` or `out` when too short.
 */
export function checkScoreArguments(
  features: number,
  x: Float32Array,
  n: number,
  out: Float32Array,
): void {
  assertInteger(n, 'n', 0);
  if (x.length < n * features) {
    throw new LetheError(
      'E_SHAPE',
      `needs n·F = ${n}·${features} = ${n * features} numbers, got ${x.length}`,
      'x',
    );
  }
  if (out.length < n)
    throw new LetheError('E_SHAPE', `needs n = ${n} numbers, got ${out.length}`, 'out');
}
