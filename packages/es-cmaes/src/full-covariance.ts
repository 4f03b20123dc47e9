import type { CovarianceModel, CovarianceState } from './covariance';
import { symmetricEigen } from './eigen';
import { encodeArray } from './json';

const MIN_EIGENVALUE_RATIO = 1e-14;

/**
 * A dense covariance matrix (full CMA-ES): C is n × n; B and D come from
 * {@link symmetricEigen}, refreshed every `eigenInterval` generations (the tutorial's lazy
 * update). Sampling, whitening and rotation cost O(n²), the update O(λn²), a refresh O(n³).
 */
export class FullCovariance implements CovarianceModel {
  readonly kind = 'full';
  readonly axisLengths: Float64Array;
  private readonly c: Float64Array;
  /** B as rows: row j is the j-th eigenvector. */
  private readonly b: Float64Array;
  private eigenGeneration: number;

  /** C = I for dimension n. */
  constructor(readonly dimension: number) {
    const n = dimension;
    this.c = new Float64Array(n * n);
    this.b = new Float64Array(n * n);
    this.axisLengths = new Float64Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      this.c[i * n + i] = 1;
      this.b[i * n + i] = 1;
    }
    this.eigenGeneration = 0;
  }

  /** Restores a model from its state (already decoded and checked by the caller). */
  static restore(
    dimension: number,
    c: Float64Array,
    eigenvectors: Float64Array,
    axisLengths: Float64Array,
    eigenGeneration: number,
  ): FullCovariance {
    const model = new FullCovariance(dimension);
    model.c.set(c);
    model.b.set(eigenvectors);
    model.axisLengths.set(axisLengths);
    model.eigenGeneration = eigenGeneration;
    return model;
  }

  sample(z: Float64Array, zOffset: number, y: Float64Array, yOffset: number): void {
    const n = this.dimension;
    const b = this.b;
    y.fill(0, yOffset, yOffset + n);
    for (let j = 0; j < n; j++) {
      const s = this.axisLengths[j]! * z[zOffset + j]!;
      if (s === 0) continue;
      const row = j * n;
      for (let k = 0; k < n; k++) y[yOffset + k]! += s * b[row + k]!;
    }
  }

  whiten(y: Float64Array, yOffset: number, z: Float64Array, zOffset: number): void {
    const n = this.dimension;
    const b = this.b;
    for (let j = 0; j < n; j++) {
      const row = j * n;
      let dot = 0;
      for (let k = 0; k < n; k++) dot += b[row + k]! * y[yOffset + k]!;
      z[zOffset + j] = dot / this.axisLengths[j]!;
    }
  }

  rotate(z: Float64Array, out: Float64Array): void {
    const n = this.dimension;
    const b = this.b;
    out.fill(0);
    for (let j = 0; j < n; j++) {
      const s = z[j]!;
      if (s === 0) continue;
      const row = j * n;
      for (let k = 0; k < n; k++) out[k]! += s * b[row + k]!;
    }
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
    // Upper triangle (j ≥ i), then mirrored: C stays exactly symmetric.
    for (let i = 0; i < n; i++) {
      const row = i * n;
      const pi = c1 * p[i]!;
      for (let j = i; j < n; j++) c[row + j] = decay * c[row + j]! + pi * p[j]!;
    }
    for (let k = 0; k < coefficients.length; k++) {
      const w = coefficients[k]!;
      if (w === 0) continue;
      const yk = k * n;
      for (let i = 0; i < n; i++) {
        const t = w * ys[yk + i]!;
        if (t === 0) continue;
        const row = i * n;
        for (let j = i; j < n; j++) c[row + j]! += t * ys[yk + j]!;
      }
    }
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) c[j * n + i] = c[i * n + j]!;
  }

  refresh(generation: number, interval: number): boolean {
    if (generation - this.eigenGeneration < interval) return false;
    const n = this.dimension;
    let { values, vectors } = symmetricEigen(this.c, n);
    const largest = values[n - 1]!;
    const floor = Math.max(largest, Number.MIN_VALUE) * MIN_EIGENVALUE_RATIO;
    if (values[0]! < floor) {
      const lift = floor - values[0]!;
      for (let i = 0; i < n; i++) this.c[i * n + i]! += lift;
      ({ values, vectors } = symmetricEigen(this.c, n));
    }
    for (let i = 0; i < n; i++) this.axisLengths[i] = Math.sqrt(Math.max(values[i]!, 0));
    this.b.set(vectors);
    this.eigenGeneration = generation;
    return true;
  }

  variances(): Float64Array {
    const n = this.dimension;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = this.c[i * n + i]!;
    return out;
  }

  matrix(): Float64Array {
    return this.c.slice();
  }

  principalAxis(i: number, out: Float64Array): void {
    const n = this.dimension;
    const d = this.axisLengths[i]!;
    for (let k = 0; k < n; k++) out[k] = d * this.b[i * n + k]!;
  }

  condition(): number {
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const d of this.axisLengths) {
      if (d < min) min = d;
      if (d > max) max = d;
    }
    return (max / min) ** 2;
  }

  toJSON(): CovarianceState {
    return {
      kind: 'full',
      c: encodeArray(this.c),
      eigenvectors: encodeArray(this.b),
      axisLengths: encodeArray(this.axisLengths),
      eigenGeneration: this.eigenGeneration,
    };
  }
}
