import { LetheError } from '@lethe/core';

/**
 * `d = ½(1 − cos(a, b))`: the cosine drift between two vectors (DAC, the SOL paper's App. C), in
 * [0, 1] — 0 for the same direction, ½ for orthogonal vectors, 1 for opposite ones. A zero vector
 * has no direction: its cosine with anything is taken as 0 (drift ½). Accumulated in float64.
 *
 * @param names the names of `a` and `b` in error messages (default `a`, `b`).
 * @throws LetheError `E_ARG` naming `a` or `b` unless it is a `Float32Array` of finite numbers;
 *   `E_SHAPE` naming `b` when the lengths differ.
 */
export function cosineDrift(
  a: Float32Array,
  b: Float32Array,
  names: readonly [string, string] = ['a', 'b'],
): number {
  checkVector(a, names[0]);
  checkVector(b, names[1]);
  if (a.length !== b.length) {
    throw new LetheError('E_SHAPE', `expected length ${a.length}, got ${b.length}`, names[1]);
  }
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  const norms = Math.sqrt(aa) * Math.sqrt(bb);
  const cosine = norms === 0 ? 0 : Math.min(1, Math.max(-1, dot / norms));
  return (1 - cosine) / 2;
}

function checkVector(vector: Float32Array, argument: string): void {
  if (!(vector instanceof Float32Array)) {
    throw new LetheError('E_ARG', 'must be a Float32Array', argument);
  }
  vector.forEach((value, i) => {
    if (!Number.isFinite(value)) {
      throw new LetheError('E_ARG', `must be finite, got ${value} at ${i}`, argument);
    }
  });
}
