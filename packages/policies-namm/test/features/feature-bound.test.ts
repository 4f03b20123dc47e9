import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  featureMagnitudeBound,
  SPECTROGRAM_MAGNITUDE_BOUND,
} from '../../src/features/feature-bound';
import { frameMagnitudes, SPECTROGRAM_BINS, STFT_HOP } from '../../src/features/stft';
import { identityNormalization } from '../../src/features/token-features';

const unit = fc.float({ min: 0, max: 1, noNaN: true });

describe('feature bounds', () => {
  it('a frame of attention weights in [0, 1] has magnitudes ≤ 16 (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(unit, { minLength: STFT_HOP, maxLength: STFT_HOP }),
        fc.array(unit, { minLength: STFT_HOP, maxLength: STFT_HOP }),
        (older, newer) => {
          const out = new Float32Array(SPECTROGRAM_BINS);
          frameMagnitudes(Float32Array.from(older), 0, Float32Array.from(newer), 0, out, 0);
          for (const m of out)
            expect(m).toBeLessThanOrEqual(SPECTROGRAM_MAGNITUDE_BOUND * (1 + 1e-6));
        },
      ),
    );
    // All ones reach it: bin 0 is the window's sum.
    const ones = new Float32Array(STFT_HOP).fill(1);
    const out = new Float32Array(SPECTROGRAM_BINS);
    frameMagnitudes(ones, 0, ones, 0, out, 0);
    expect(out[0]).toBeCloseTo(SPECTROGRAM_MAGNITUDE_BOUND, 5);
  });

  it('scales a normalised bin’s reach by its statistics; the age features stay within ±1', () => {
    expect(featureMagnitudeBound('age', identityNormalization())).toBe(1);
    expect(featureMagnitudeBound('spectrogram', identityNormalization())).toBe(16);
    const { mean, std } = identityNormalization();
    mean[4] = 20;
    std[4] = 0.5;
    expect(featureMagnitudeBound('spectrogram', { mean, std })).toBe(40);
    std[4] = 0;
    expect(featureMagnitudeBound('spectrogram', { mean, std })).toBeCloseTo(20 / 1e-7, 0);
  });
});
