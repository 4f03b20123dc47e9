import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  frameMagnitudes,
  periodicHann,
  SPECTROGRAM_BINS,
  STFT_HOP,
  STFT_WINDOW,
} from '../../src/features/stft';

/** |DFT| of the Hann-windowed frame, term by term in float64. */
function directMagnitudes(frame: readonly number[]): number[] {
  const N = frame.length;
  return Array.from({ length: N / 2 + 1 }, (_, k) => {
    let re = 0;
    let im = 0;
    for (let n = 0; n < N; n++) {
      const w = 0.5 * (1 - Math.cos((2 * Math.PI * n) / N));
      re += w * frame[n]! * Math.cos((2 * Math.PI * k * n) / N);
      im -= w * frame[n]! * Math.sin((2 * Math.PI * k * n) / N);
    }
    return Math.hypot(re, im);
  });
}

describe('STFT frame', () => {
  it('has the paper’s shape: n_fft 32, hop 16, 17 one-sided bins', () => {
    expect([STFT_WINDOW, STFT_HOP, SPECTROGRAM_BINS]).toEqual([32, 16, 17]);
  });

  it('uses the periodic Hann window (torch.hann_window): w[0] = 0, w[N/2] = 1, no final zero', () => {
    const w = periodicHann(32);
    expect(w[0]).toBe(0);
    expect(w[16]).toBeCloseTo(1, 15);
    expect(w[31]).toBeCloseTo(0.5 - 0.5 * Math.cos((2 * Math.PI * 31) / 32), 15);
    expect(w[31]).toBeGreaterThan(0);
  });

  it('equals a direct DFT of the windowed frame', () => {
    fc.assert(
      fc.property(
        fc.array(fc.float({ min: 0, max: 1, noNaN: true }), { minLength: 32, maxLength: 32 }),
        (samples) => {
          const frame = Float32Array.from(samples);
          const out = new Float32Array(17);
          frameMagnitudes(frame, 0, frame, 16, out, 0);
          const expected = directMagnitudes([...frame]);
          expected.forEach((m, k) => expect(out[k]).toBeCloseTo(m, 5));
        },
      ),
    );
  });

  it('reads the older and newer halves from their own arrays and offsets', () => {
    const frame = Float32Array.from({ length: 32 }, (_, i) => Math.sin(i) ** 2);
    const older = new Float32Array(40);
    older.set(frame.subarray(0, 16), 7);
    const newer = new Float32Array(40);
    newer.set(frame.subarray(16), 20);
    const out = new Float32Array(20);
    frameMagnitudes(older, 7, newer, 20, out, 3);
    const expected = directMagnitudes([...frame]);
    expected.forEach((m, k) => expect(out[3 + k]).toBeCloseTo(m, 5));
  });

  it('gives the window sum at DC for a constant frame and zero elsewhere', () => {
    const ones = new Float32Array(32).fill(1);
    const out = new Float32Array(17);
    frameMagnitudes(ones, 0, ones, 16, out, 0);
    expect(out[0]).toBeCloseTo(16, 5);
    expect(out[1]).toBeCloseTo(8, 5);
    for (let k = 2; k < 17; k++) expect(out[k]).toBeCloseTo(0, 5);
  });
});
