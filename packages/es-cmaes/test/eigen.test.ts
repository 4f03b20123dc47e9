import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/index';

/** max |B·diag(values)·Bᵀ − C| and max |BᵀB − I|, with B's columns the returned rows. */
function residuals(c: Float64Array, n: number): { reconstruction: number; orthogonality: number } {
  const { values, vectors } = symmetricEigen(c, n);
  let reconstruction = 0;
  let orthogonality = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let dot = 0;
      for (let k = 0; k < n; k++) {
        sum += vectors[k * n + i]! * values[k]! * vectors[k * n + j]!;
        dot += vectors[i * n + k]! * vectors[j * n + k]!;
      }
      reconstruction = Math.max(reconstruction, Math.abs(sum - c[i * n + j]!));
      orthogonality = Math.max(orthogonality, Math.abs(dot - (i === j ? 1 : 0)));
    }
  }
  return { reconstruction, orthogonality };
}

function maxAbs(c: Float64Array): number {
  let m = 0;
  for (const v of c) m = Math.max(m, Math.abs(v));
  return m;
}

const entry = fc
  .double({ min: -1e3, max: 1e3, noNaN: true })
  .map((v) => (Math.abs(v) < 1e-150 ? 0 : v));

const symmetricMatrix = fc.integer({ min: 1, max: 24 }).chain((n) =>
  fc
    // No entry whose square underflows (|v| < 1e-154): the Householder and QL steps square
    // entries without rescaling, so rotations built from such numbers keep only a few bits and
    // are not orthogonal to 1e-12 (as with subnormal entries in any eigensolver). Covariance
    // matrices of CMA-ES never come near that range.
    .array(entry, {
      minLength: (n * (n + 1)) / 2,
      maxLength: (n * (n + 1)) / 2,
    })
    .map((entries) => {
      const c = new Float64Array(n * n);
      let t = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j <= i; j++) {
          c[i * n + j] = entries[t]!;
          c[j * n + i] = entries[t]!;
          t++;
        }
      }
      return { n, c };
    }),
);

describe('symmetricEigen (Householder tridiagonalisation + implicit QL)', () => {
  it('reconstructs random symmetric matrices, B·diag(D²)·Bᵀ = C, with orthonormal B', () => {
    fc.assert(
      fc.property(symmetricMatrix, ({ n, c }) => {
        const { reconstruction, orthogonality } = residuals(c, n);
        const scale = Math.max(1, maxAbs(c));
        expect(reconstruction).toBeLessThan(1e-12 * n * scale);
        expect(orthogonality).toBeLessThan(1e-12 * n);
      }),
      { numRuns: 200 },
    );
  });

  it('returns eigenvalues in ascending order and their sum is the trace', () => {
    fc.assert(
      fc.property(symmetricMatrix, ({ n, c }) => {
        const { values } = symmetricEigen(c, n);
        let trace = 0;
        for (let i = 0; i < n; i++) trace += c[i * n + i]!;
        for (let i = 1; i < n; i++) expect(values[i]!).toBeGreaterThanOrEqual(values[i - 1]!);
        expect(Math.abs(values.reduce((a, b) => a + b, 0) - trace)).toBeLessThan(
          1e-11 * n * Math.max(1, maxAbs(c)),
        );
      }),
      { numRuns: 100 },
    );
  });

  it('gets a 2 × 2 matrix exactly: [[2, 1], [1, 2]] has eigenvalues 1 and 3', () => {
    const { values, vectors } = symmetricEigen(new Float64Array([2, 1, 1, 2]), 2);
    expect(values[0]).toBeCloseTo(1, 14);
    expect(values[1]).toBeCloseTo(3, 14);
    expect(Math.abs(vectors[2]!)).toBeCloseTo(Math.SQRT1_2, 14);
    expect(vectors[2]! * vectors[3]!).toBeGreaterThan(0); // (1, 1)/√2 for 3
  });

  it('handles diagonal, zero, identity, repeated and badly conditioned matrices', () => {
    const n = 6;
    const cases: Float64Array[] = [];
    const diagonal = new Float64Array(n * n);
    for (let i = 0; i < n; i++) diagonal[i * n + i] = 10 ** (i - 3);
    cases.push(diagonal);
    cases.push(new Float64Array(n * n));
    const identity = new Float64Array(n * n);
    for (let i = 0; i < n; i++) identity[i * n + i] = 1;
    cases.push(identity);
    // Rank one plus identity: eigenvalue 1 repeated n − 1 times.
    const repeated = identity.slice();
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) repeated[i * n + j]! += 1;
    cases.push(repeated);
    // Condition 1e14 in a rotated basis (a C that CMA-ES could reach).
    const rotated = new Float64Array(n * n);
    const q = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) q[i * n + j] = Math.cos(i * 1.3 + j * j);
    const { vectors: basis } = symmetricEigen(
      q.map((_, k) => q[k]! + q[(k % n) * n + Math.floor(k / n)]!),
      n,
    );
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let k = 0; k < n; k++)
          s += basis[k * n + i]! * 10 ** ((14 * k) / (n - 1)) * basis[k * n + j]!;
        rotated[i * n + j] = s;
      }
    }
    cases.push(rotated);
    for (const c of cases) {
      const { reconstruction, orthogonality } = residuals(c, n);
      expect(reconstruction).toBeLessThanOrEqual(1e-13 * Math.max(1, maxAbs(c)) * n);
      expect(orthogonality).toBeLessThan(1e-13 * n);
    }
    const { values } = symmetricEigen(repeated, n);
    for (let i = 0; i < n - 1; i++) expect(values[i]).toBeCloseTo(1, 12);
    expect(values[n - 1]).toBeCloseTo(n + 1, 12);
  });

  it('does not modify its input', () => {
    const c = new Float64Array([4, 1, 0, 1, 3, 2, 0, 2, 5]);
    const copy = c.slice();
    symmetricEigen(c, 3);
    expect(c).toEqual(copy);
  });

  it('rejects bad input with coded errors', () => {
    expectLetheError(() => symmetricEigen(new Float64Array(3), 2), 'E_SHAPE', 'matrix');
    expectLetheError(() => symmetricEigen(new Float64Array(0), 0), 'E_ARG', 'dimension');
    expectLetheError(
      () => symmetricEigen(new Float64Array([1, Number.NaN, Number.NaN, 1]), 2),
      'E_ARG',
      'matrix',
    );
    expectLetheError(
      () => symmetricEigen(new Float64Array([Number.POSITIVE_INFINITY]), 1),
      'E_ARG',
      'matrix',
    );
  });
});
