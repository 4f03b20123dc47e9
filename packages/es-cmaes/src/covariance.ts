import type { JsonNumber } from './json';

/**
 * The covariance matrix C of the search distribution and its factorisation C = B·D²·Bᵀ (B
 * orthogonal, D diagonal with the axis lengths): what sampling, whitening and the covariance
 * update need. {@link FullCovariance} keeps a dense C; {@link DiagonalCovariance} (separable
 * CMA-ES) a diagonal one, with B = I and D = √diag(C).
 */
export interface CovarianceModel {
  /** `full` or `diagonal`. */
  readonly kind: 'full' | 'diagonal';
  /** n. */
  readonly dimension: number;
  /** D: the square roots of C's eigenvalues (for `full`, as of the last decomposition). */
  readonly axisLengths: Float64Array;
  /** y = B·D·z for z and y of length n at the given offsets. */
  sample(z: Float64Array, zOffset: number, y: Float64Array, yOffset: number): void;
  /** z = D⁻¹·Bᵀ·y, the inverse of {@link sample}; ‖z‖ = ‖C^{-1/2} y‖. */
  whiten(y: Float64Array, yOffset: number, z: Float64Array, zOffset: number): void;
  /** out = B·z, so that B·(D⁻¹Bᵀy) = C^{-1/2}·y. */
  rotate(z: Float64Array, out: Float64Array): void;
  /**
   * C ← decay·C + c1·p pᵀ + Σ_k coefficients[k]·y_k y_kᵀ, with y_k row k of `ys` (λ × n).
   * The caller chooses the coefficients (c_μ w°_k, possibly negative) so that C stays positive
   * definite.
   */
  update(
    decay: number,
    c1: number,
    p: Float64Array,
    ys: Float64Array,
    coefficients: Float64Array,
  ): void;
  /**
   * Refreshes B and D from C when generation − (last refresh) ≥ interval; returns whether it
   * did. Non-positive eigenvalues (rounding) lift C's diagonal so that the smallest becomes
   * 10⁻¹⁴ of the largest.
   *
   * @throws LetheError `E_ARG` naming `matrix` when C has a non-finite entry (σ or the samples
   * overflowed).
   */
  refresh(generation: number, interval: number): boolean;
  /** diag(C), a fresh array. */
  variances(): Float64Array;
  /** C as a dense row-major n × n matrix, a fresh array (O(n²) memory even when diagonal). */
  matrix(): Float64Array;
  /** Writes D_i·b_i (the i-th principal axis of the distribution, scaled by its length). */
  principalAxis(i: number, out: Float64Array): void;
  /** (max D / min D)², the condition number of C. */
  condition(): number;
  /** Plain-JSON state. */
  toJSON(): CovarianceState;
}

/** Plain-JSON state of a {@link CovarianceModel}. */
export type CovarianceState =
  | {
      readonly kind: 'full';
      /** C, row-major n × n. */
      readonly c: JsonNumber[];
      /** B as rows (eigenvectors), row-major n × n. */
      readonly eigenvectors: JsonNumber[];
      /** D, the axis lengths. */
      readonly axisLengths: JsonNumber[];
      /** Generation of the last eigendecomposition. */
      readonly eigenGeneration: number;
    }
  | {
      readonly kind: 'diagonal';
      /** diag(C). */
      readonly c: JsonNumber[];
    };
