import { LetheError } from '@lethe/core';

/**
 * Checks two methods' values on the same examples: `a` not empty, `b` as long.
 *
 * @throws LetheError `E_ARG` naming `a` when empty (or not an array), `E_SHAPE` naming `b` when
 *   its length differs (or it is not an array).
 */
export function checkPaired(a: readonly unknown[], b: readonly unknown[]): void {
  if (!Array.isArray(a) || a.length === 0)
    throw new LetheError('E_ARG', 'must be a non-empty array', 'a');
  if (!Array.isArray(b) || a.length !== b.length) {
    throw new LetheError(
      'E_SHAPE',
      `has ${Array.isArray(b) ? b.length : 'no'} values, a has ${a.length}`,
      'b',
    );
  }
}
