import { LetheError } from '@lethe/core';
import { tf } from './tf';

/** Number of tensors currently allocated on the active backend. */
export function countTensors(): number {
  return tf.memory().numTensors;
}

/**
 * Runs `fn` and throws `E_STATE` if it leaves more tensors allocated than before, excluding
 * the tensors it returns (which the caller now owns). Works with sync and async functions.
 *
 * @example
 * ```ts
 * const y = await withLeakCheck(() => tf.tidy(() => tf.add(a, b)));  // fine: y is returned
 * ```
 */
export async function withLeakCheck<T>(
  fn: () => T | Promise<T>,
  label = 'withLeakCheck',
): Promise<T> {
  const before = countTensors();
  const result = await fn();
  const owned = returnedTensorCount(result);
  const leaked = countTensors() - before - owned;
  if (leaked > 0) throw new LetheError('E_STATE', `${leaked} tensor(s) leaked`, label);
  return result;
}

function returnedTensorCount(value: unknown): number {
  const seen = new Set<unknown>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof tf.Tensor) return;
    if (Array.isArray(v)) v.forEach(visit);
    else if (v instanceof Map) v.forEach(visit);
    else if (Object.getPrototypeOf(v) === Object.prototype) Object.values(v).forEach(visit);
  };
  visit(value);
  let count = 0;
  for (const v of seen) if (v instanceof tf.Tensor && !v.isDisposed) count++;
  if (value instanceof tf.Tensor && !value.isDisposed) count++;
  return count;
}
