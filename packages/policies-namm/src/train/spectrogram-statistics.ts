import { SPECTROGRAM_BINS } from '../features/stft';
import type { SpectrogramNormalization } from '../features/token-features';

/**
 * Running mean and variance of each spectrogram bin over feature rows (Welford's update, in
 * float64, so the result matches a two-pass computation to rounding).
 */
export class SpectrogramStatistics {
  private rows = 0;
  private readonly mean = new Float64Array(SPECTROGRAM_BINS);
  private readonly m2 = new Float64Array(SPECTROGRAM_BINS);

  /** Rows added so far. */
  get count(): number {
    return this.rows;
  }

  /** Adds `n` rows of `x`, `stride` values apart, whose first `SPECTROGRAM_BINS` values are the bins. */
  add(x: Float32Array, n: number, stride: number): void {
    for (let i = 0; i < n; i++) {
      this.rows++;
      for (let k = 0; k < SPECTROGRAM_BINS; k++) {
        const value = x[i * stride + k]!;
        const delta = value - this.mean[k]!;
        this.mean[k]! += delta / this.rows;
        this.m2[k]! += delta * (value - this.mean[k]!);
      }
    }
  }

  /** Each bin's mean and standard deviation (population, ÷ count) so far. */
  normalization(): SpectrogramNormalization {
    return {
      mean: Float32Array.from(this.mean),
      std: Float32Array.from(this.m2, (m2) => Math.sqrt(m2 / this.rows)),
    };
  }
}
