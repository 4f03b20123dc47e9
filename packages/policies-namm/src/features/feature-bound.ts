import { SPECTROGRAM_BINS, STFT_WINDOW } from './stft';
import { type FeatureSet, MIN_FEATURE_STD, type SpectrogramNormalization } from './token-features';

/**
 * The largest value of a spectrogram bin, `STFT_WINDOW / 2` = 16: a frame's samples are
 * attention weights averaged over a KV head's query group, in [0, 1], so a magnitude
 * `|Σ_n hann[n]·a[n]·e^(−2πikn/N)|` is at most `Σ_n hann[n] = N/2`; the EMA averages frames (from
 * 0), so every reduced spectrogram value lies in [0, 16].
 */
export const SPECTROGRAM_MAGNITUDE_BOUND = STFT_WINDOW / 2;

/**
 * The largest magnitude a token feature of `set` takes for attention weights in [0, 1], the
 * range the runtime observes: the age embedding's sines and cosines lie within ±1, a normalised
 * bin `(ω − mean) / max(std, 1e-7)` with ω ∈ [0, {@link SPECTROGRAM_MAGNITUDE_BOUND}] within
 * `±max(|mean|, |16 − mean|) / max(std, 1e-7)`. A NaN statistic gives NaN (as `Math.max`).
 */
export function featureMagnitudeBound(
  set: FeatureSet,
  normalization: SpectrogramNormalization,
): number {
  if (set === 'age') return 1;
  let bound = 1;
  const { mean, std } = normalization;
  for (let k = 0; k < SPECTROGRAM_BINS; k++) {
    const reach = Math.max(Math.abs(mean[k]!), Math.abs(SPECTROGRAM_MAGNITUDE_BOUND - mean[k]!));
    bound = Math.max(bound, reach / Math.max(std[k]!, MIN_FEATURE_STD));
  }
  return bound;
}
