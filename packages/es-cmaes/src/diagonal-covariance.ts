import type { CovarianceModel, CovarianceState } from './covariance';
import { encodeArray } from './json';

/**
 * A diagonal covariance matrix (separable CMA-ES, Ros & Hansen 2008): B = I, D = √diag(C).
 * Every operation is O(n) per vector, so n in the thousands is cheap; the price is that the
 * distribution only learns axis-parallel scalings.
 */
export class DiagonalCovariance implements CovarianceModel {
  readonly kind = 'diagonal';
  readonly axisLengths: Float64Array;
  private readonly c: Float64Array;

  /** C = I for dimension n. */
  constructor(readonly dimension: number) {
    this.c = new Float64Array(dimension).fill(1);
    this.axisLengths = new Float64Array(dimension).fill(1);
  }

  /** Restores a model from diag(C) (already decoded and checked by the caller). */
  static restore(dimension: number, c: Float64Array): DiagonalCovariance {
    const model = new DiagonalCovariance(dimension);
    model.c.set(c);
    for (let i = 0; i < dimension; i++) model.axisLengths[i] = Math.sqrt(c[i]!);
    return model;
  }

  sample(z: Float64Array, zOffset: number, y: Float64Array, yOffset: number): void {
    const d = this.axisLengths;
    for (let i = 0; i < this.dimension; i++) y[yOffset + i] = d[i]! * z[zOffset + i]!;
  }

  whiten(y: Float64Array, yOffset: number, z: Float64Array, zOffset: number): void {
    const d = this.axisLengths;
    for (let i = 0; i < this.dimension; i++) z[zOffset + i] = y[yOffset + i]! / d[i]!;
  }

  rotate(z: Float64Array, out: Float64Array): void {
    out.set(z.subarray(0, this.dimension));
  }

  update(
    decay: number,
    c1: number,
    p: Float64Array,
    ys: Float64Array,
    coefficients: Float64Array,
  ): void {
    const n = this.dimension;
    const c = this.c;
    for (let i = 0; i < n; i++) c[i] = decay * c[i]! + c1 * p[i]! * p[i]!;
    for (let k = 0; k < coefficients.length; k++) {
      const w = coefficients[k]!;
      if (w === 0) continue;
      const yk = k * n;
      for (let i = 0; i < n; i++) c[i]! += w * ys[yk + i]! * ys[yk + i]!;
    }
    for (let i = 0; i < n; i++) this.axisLengths[i] = Math.sqrt(c[i]!);
  }

  refresh(): boolean {
    // D follows C in every update; only guard against rounding below zero.
    let max = 0;
    for (const v of this.c) if (v > max) max = v;
    const floor = Math.max(max, Number.MIN_VALUE) * 1e-14;
    let lifted = false;
    for (let i = 0; i < this.dimension; i++) {
      if (!(this.c[i]! >= floor)) {
        this.c[i] = floor;
        this.axisLengths[i] = Math.sqrt(floor);
        lifted = true;
      }
    }
    return lifted;
  }

  variances(): Float64Array {
    return this.c.slice();
  }

  matrix(): Float64Array {
    const n = this.dimension;
    const out = new Float64Array(n * n);
    for (let i = 0; i < n; i++) out[i * n + i] = this.c[i]!;
    return out;
  }

  principalAxis(i: number, out: Float64Array): void {
    out.fill(0);
    out[i] = this.axisLengths[i]!;
  }

  condition(): number {
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const v of this.c) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return max / min;
  }

  toJSON(): CovarianceState {
    return { kind: 'diagonal', c: encodeArray(this.c) };
  }
}
