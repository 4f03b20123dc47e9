/** STFT window length n_fft (the paper's n_w, Table 9). */
export const STFT_WINDOW = 32;
/** STFT hop (the paper's stride s_w): a frame completes every `STFT_HOP` queries. */
export const STFT_HOP = 16;
/** One-sided frequency bins of a frame: `STFT_WINDOW / 2 + 1` magnitudes. */
export const SPECTROGRAM_BINS = STFT_WINDOW / 2 + 1;

/** The periodic Hann window of length `length`: `0.5 − 0.5·cos(2πn / length)` (torch's `hann_window` default). */
export function periodicHann(length: number): Float64Array {
  const window = new Float64Array(length);
  for (let n = 0; n < length; n++) window[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / length);
  return window;
}

/** `hann[n]·cos(2πkn/N)` and `−hann[n]·sin(2πkn/N)`, `[bin][n]`: the windowed DFT as two matrices. */
function windowedDft(): { readonly re: Float64Array; readonly im: Float64Array } {
  const hann = periodicHann(STFT_WINDOW);
  const re = new Float64Array(SPECTROGRAM_BINS * STFT_WINDOW);
  const im = new Float64Array(SPECTROGRAM_BINS * STFT_WINDOW);
  for (let k = 0; k < SPECTROGRAM_BINS; k++) {
    for (let n = 0; n < STFT_WINDOW; n++) {
      // (k·n) mod N keeps the angle small, so the table is exact to rounding.
      const angle = (2 * Math.PI * ((k * n) % STFT_WINDOW)) / STFT_WINDOW;
      re[k * STFT_WINDOW + n] = hann[n]! * Math.cos(angle);
      im[k * STFT_WINDOW + n] = -hann[n]! * Math.sin(angle);
    }
  }
  return { re, im };
}

const DFT = windowedDft();

/**
 * The magnitudes of one STFT frame: `|Σ_n hann[n]·frame[n]·e^(−2πikn/N)|` for the
 * {@link SPECTROGRAM_BINS} one-sided bins k = 0 … N/2 (N = {@link STFT_WINDOW}, no normalisation,
 * as `torch.stft(…, center=False, onesided=True).abs()`). The frame is read as `older` (its first
 * {@link STFT_HOP} samples) followed by `newer` (the last `STFT_HOP`), each starting at the given
 * offset, so a streaming caller needs no copy; the magnitudes go to `out[outOffset …]`.
 */
export function frameMagnitudes(
  older: Float32Array,
  olderOffset: number,
  newer: Float32Array,
  newerOffset: number,
  out: Float32Array,
  outOffset: number,
): void {
  const { re, im } = DFT;
  for (let k = 0; k < SPECTROGRAM_BINS; k++) {
    const row = k * STFT_WINDOW;
    let real = 0;
    let imag = 0;
    for (let n = 0; n < STFT_HOP; n++) {
      const sample = older[olderOffset + n]!;
      real += re[row + n]! * sample;
      imag += im[row + n]! * sample;
    }
    for (let n = 0; n < STFT_HOP; n++) {
      const sample = newer[newerOffset + n]!;
      real += re[row + STFT_HOP + n]! * sample;
      imag += im[row + STFT_HOP + n]! * sample;
    }
    out[outOffset + k] = Math.sqrt(real * real + imag * imag);
  }
}
