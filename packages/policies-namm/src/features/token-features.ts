import { AGE_FEATURES, writeAgeEmbedding } from './age-embedding';
import type { HeadMemory } from './head-memory';
import { SPECTROGRAM_BINS } from './stft';

/**
 * Which features score a token: `spectrogram` — its normalised reduced spectrogram
 * ({@link SPECTROGRAM_BINS} values) followed by the age embedding ({@link AGE_FEATURES}), 25 in
 * all, the paper's; `age` — the age embedding alone (the paper's Table 23 ablation).
 */
export type FeatureSet = 'spectrogram' | 'age';

/** The feature sets, for validation. */
export const FEATURE_SETS: readonly FeatureSet[] = ['spectrogram', 'age'];

/** Width of a token's feature vector under `set`. */
export function featureWidth(set: FeatureSet): number {
  return set === 'spectrogram' ? SPECTROGRAM_BINS + AGE_FEATURES : AGE_FEATURES;
}

/** Floor of the normalisation's standard deviation (as the reference code's running normaliser). */
export const MIN_FEATURE_STD = 1e-7;

/**
 * Statistics the spectrogram features are normalised with, `(ω − mean) / max(std, 1e-7)` per
 * bin: measured once on the full-cache model (the paper: unit variance at initialisation on the
 * first training task) and saved with the policy, so a policy scores the same on any model.
 */
export interface SpectrogramNormalization {
  /** Mean of each bin, `[SPECTROGRAM_BINS]`. */
  readonly mean: Float32Array;
  /** Standard deviation of each bin, `[SPECTROGRAM_BINS]`. */
  readonly std: Float32Array;
}

/** Zero mean, unit deviation: features left as they are. */
export function identityNormalization(): SpectrogramNormalization {
  return {
    mean: new Float32Array(SPECTROGRAM_BINS),
    std: new Float32Array(SPECTROGRAM_BINS).fill(1),
  };
}

/**
 * Writes the feature vectors of a head's entries, `[memory.size, featureWidth(set)]`, to `out`:
 * for `spectrogram` the normalised EMA then the age embedding, for `age` the embedding alone.
 * `ages[i]` is entry i's age (tokens processed since it was written).
 */
export function writeTokenFeatures(
  memory: HeadMemory,
  ages: Int32Array,
  set: FeatureSet,
  normalization: SpectrogramNormalization,
  out: Float32Array,
): void {
  const width = featureWidth(set);
  const { mean, std } = normalization;
  for (let i = 0; i < memory.size; i++) {
    const row = i * width;
    if (set === 'spectrogram') {
      for (let k = 0; k < SPECTROGRAM_BINS; k++) {
        const value = memory.ema[i * SPECTROGRAM_BINS + k]!;
        out[row + k] = (value - mean[k]!) / Math.max(std[k]!, MIN_FEATURE_STD);
      }
    }
    writeAgeEmbedding(ages[i]!, out, row + width - AGE_FEATURES);
  }
}
