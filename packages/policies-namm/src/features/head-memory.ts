import { SPECTROGRAM_BINS, STFT_HOP } from './stft';

/**
 * What NAMM remembers about the live entries of one KV head between rounds, entry by entry in
 * increasing token position: the reduced spectrogram (the EMA of its frames), the last
 * {@link STFT_HOP} attention samples of the previous frame (the padding the next frame starts
 * with) and the samples of the frame being filled.
 */
export class HeadMemory {
  /** Token position of each remembered entry, increasing. */
  positions: Int32Array = new Int32Array(0);
  /** Reduced spectrogram, `[entries, SPECTROGRAM_BINS]`. */
  ema: Float32Array = new Float32Array(0);
  /** The previous frame's newest `STFT_HOP` samples, `[entries, STFT_HOP]`. */
  previous: Float32Array = new Float32Array(0);
  /** Samples of the frame being filled, `[entries, STFT_HOP]` (the first `phase` are set). */
  current: Float32Array = new Float32Array(0);

  /** Number of remembered entries. */
  get size(): number {
    return this.positions.length;
  }

  /**
   * Re-aligns the memory to the head's live entries `live` (increasing positions): entries still
   * live keep what they had, entries the cache dropped are forgotten, new entries start from zero
   * (attention they could not have received yet is 0: the sequence's zero padding).
   */
  align(live: Int32Array): void {
    const n = live.length;
    const ema = new Float32Array(n * SPECTROGRAM_BINS);
    const previous = new Float32Array(n * STFT_HOP);
    const current = new Float32Array(n * STFT_HOP);
    let j = 0;
    for (let i = 0; i < n; i++) {
      const position = live[i]!;
      while (j < this.positions.length && this.positions[j]! < position) j++;
      if (j < this.positions.length && this.positions[j] === position) {
        ema.set(
          this.ema.subarray(j * SPECTROGRAM_BINS, (j + 1) * SPECTROGRAM_BINS),
          i * SPECTROGRAM_BINS,
        );
        previous.set(this.previous.subarray(j * STFT_HOP, (j + 1) * STFT_HOP), i * STFT_HOP);
        current.set(this.current.subarray(j * STFT_HOP, (j + 1) * STFT_HOP), i * STFT_HOP);
      }
    }
    this.positions = Int32Array.from(live);
    this.ema = ema;
    this.previous = previous;
    this.current = current;
  }

  /** After a frame completed: its newest samples become the next frame's padding. */
  advanceFrame(): void {
    const finished = this.previous;
    this.previous = this.current;
    this.current = finished;
  }
}
