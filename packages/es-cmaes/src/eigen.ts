import { assertInteger, assertLength, LetheError } from '@lethe/core';

/** The eigendecomposition C = Bᵀ-rows · diag(values) · rows of a symmetric matrix. */
export interface SymmetricEigen {
  /** Eigenvalues in ascending order. */
  readonly values: Float64Array;
  /**
   * Eigenvectors as the rows of a row-major n × n matrix: row i (`vectors[i·n … i·n + n − 1]`)
   * is the unit eigenvector of `values[i]`. With B the matrix whose columns are these vectors,
   * C = B · diag(values) · Bᵀ and BᵀB = I.
   */
  readonly vectors: Float64Array;
}

const EPS = 2 ** -52;
const MAX_SWEEPS_PER_VALUE = 64;

/**
 * Eigendecomposition of a real symmetric n × n matrix: Householder reduction to tridiagonal
 * form followed by the implicit QL algorithm with Wilkinson-type shifts (the EISPACK
 * tred2/tql2 pair; O(n³), about 10n³ floating-point operations with vectors). Only the lower
 * triangle of `matrix` is read.
 *
 * @param matrix row-major n × n, symmetric; not modified
 * @param dimension n
 * @throws LetheError `E_ARG` naming `dimension` (not an integer ≥ 1) or `matrix` (a non-finite
 * entry, or — never seen for finite input — no convergence); `E_SHAPE` naming `matrix` when its
 * length is not n².
 */
export function symmetricEigen(matrix: Float64Array, dimension: number): SymmetricEigen {
  const n = assertInteger(dimension, 'dimension', 1);
  assertLength(matrix, n * n, 'matrix');
  // v: working copy stored transposed (JAMA's V[i][j] is v[j * n + i]), so that every inner
  // loop of the reduction runs along a row; C is symmetric, so the copy reads the same.
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const x = matrix[i * n + j]!;
      if (!Number.isFinite(x)) {
        throw new LetheError('E_ARG', `non-finite entry ${x} at (${i}, ${j})`, 'matrix');
      }
      v[i * n + j] = x;
      v[j * n + i] = x;
    }
  }
  const d = new Float64Array(n);
  const e = new Float64Array(n);
  tridiagonalize(v, d, e, n);
  // Row i of v is column i of JAMA's V: QL rotates rows, and eigenvectors come out as rows.
  const w = v;
  diagonalize(w, d, e, n);

  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => d[a]! - d[b]! || a - b);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    const src = order[k]!;
    values[k] = d[src]!;
    vectors.set(w.subarray(src * n, src * n + n), k * n);
  }
  return { values, vectors };
}

/**
 * Householder tridiagonalisation (tred2): on return `d` holds the diagonal, `e[1 … n−1]` the
 * subdiagonal (e[0] = 0) and `v` the accumulated orthogonal transformation, stored
 * transposed (row i of `v` is its column i).
 */
function tridiagonalize(v: Float64Array, d: Float64Array, e: Float64Array, n: number): void {
  for (let j = 0; j < n; j++) d[j] = v[j * n + (n - 1)]!;
  for (let i = n - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]!);
    if (scale === 0) {
      e[i] = d[i - 1]!;
      for (let j = 0; j < i; j++) {
        d[j] = v[j * n + (i - 1)]!;
        v[j * n + i] = 0;
        v[i * n + j] = 0;
      }
    } else {
      // Householder vector in d[0 … i−1].
      for (let k = 0; k < i; k++) {
        d[k]! /= scale;
        h += d[k]! * d[k]!;
      }
      let f = d[i - 1]!;
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      // Similarity transformation of the leading i × i block.
      for (let j = 0; j < i; j++) {
        f = d[j]!;
        v[i * n + j] = f;
        g = e[j]! + v[j * n + j]! * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += v[j * n + k]! * d[k]!;
          e[k]! += v[j * n + k]! * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j]! /= h;
        f += e[j]! * d[j]!;
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j]! -= hh * d[j]!;
      for (let j = 0; j < i; j++) {
        f = d[j]!;
        g = e[j]!;
        for (let k = j; k <= i - 1; k++) v[j * n + k]! -= f * e[k]! + g * d[k]!;
        d[j] = v[j * n + (i - 1)]!;
        v[j * n + i] = 0;
      }
    }
    d[i] = h;
  }
  // Accumulate the transformations.
  for (let i = 0; i < n - 1; i++) {
    v[i * n + (n - 1)] = v[i * n + i]!;
    v[i * n + i] = 1;
    const h = d[i + 1]!;
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = v[(i + 1) * n + k]! / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += v[(i + 1) * n + k]! * v[j * n + k]!;
        for (let k = 0; k <= i; k++) v[j * n + k]! -= g * d[k]!;
      }
    }
    for (let k = 0; k <= i; k++) v[(i + 1) * n + k] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = v[j * n + (n - 1)]!;
    v[j * n + (n - 1)] = 0;
  }
  v[(n - 1) * n + (n - 1)] = 1;
  e[0] = 0;
}

/**
 * Implicit QL on the tridiagonal (d, e) (tql2), accumulating rotations into the rows of `w`:
 * on return `d` holds the eigenvalues and row i of `w` the eigenvector of d[i].
 */
function diagonalize(w: Float64Array, d: Float64Array, e: Float64Array, n: number): void {
  for (let i = 1; i < n; i++) e[i - 1] = e[i]!;
  e[n - 1] = 0;
  let f = 0;
  let tst1 = 0;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]!) + Math.abs(e[l]!));
    let m = l;
    while (m < n - 1 && Math.abs(e[m]!) > EPS * tst1) m++;
    if (m > l) {
      let iterations = 0;
      do {
        if (++iterations > MAX_SWEEPS_PER_VALUE) {
          throw new LetheError('E_ARG', 'the QL iteration did not converge', 'matrix');
        }
        // Implicit shift.
        let g = d[l]!;
        let p = (d[l + 1]! - g) / (2 * e[l]!);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l]! / (p + r);
        d[l + 1] = e[l]! * (p + r);
        const dl1 = d[l + 1]!;
        let h = g - d[l]!;
        for (let i = l + 2; i < n; i++) d[i]! -= h;
        f += h;
        // Implicit QL transformation.
        p = d[m]!;
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1]!;
        let s = 0;
        let s2 = 0;
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i]!;
          h = c * p;
          r = Math.hypot(p, e[i]!);
          e[i + 1] = s * r;
          s = e[i]! / r;
          c = p / r;
          p = c * d[i]! - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]!);
          // Rotate rows i and i + 1 of w.
          const ri = i * n;
          const rj = ri + n;
          for (let k = 0; k < n; k++) {
            const a = w[rj + k]!;
            const b = w[ri + k]!;
            w[rj + k] = s * b + c * a;
            w[ri + k] = c * b - s * a;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]!) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]!) > EPS * tst1);
    }
    d[l]! += f;
    e[l] = 0;
  }
}
