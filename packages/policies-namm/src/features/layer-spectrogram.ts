import { LetheError } from '@lethe/core';
import type { LayerObservation } from '@lethe/kv-cache';
import { HeadMemory } from './head-memory';
import { foldFrame } from './spectrogram-ema';
import { frameMagnitudes, SPECTROGRAM_BINS, STFT_HOP } from './stft';

/**
 * The attention spectrograms of one layer of one sequence, carried from round to round. Each
 * cached token's attention column — the attention the layer's queries paid it, averaged over the
 * query heads of its KV head's group — is a time series over queries; frames of
 * 32 samples (`STFT_WINDOW`) start every {@link STFT_HOP} queries (so a frame ends at every
 * query position that is a multiple of the hop), and each completed frame's magnitudes fold into
 * the token's EMA. A round reads the attention of every query since the previous round, so the
 * frames are the same whatever the rounds' spacing; with rounds every `n_up` tokens (a multiple
 * of the hop) they are exactly the reference code's chunked STFT, whose padding is the previous
 * chunk's last 16 columns and zeros for a new sequence.
 */
export class LayerSpectrogram {
  /** One memory per KV head. */
  readonly heads: HeadMemory[];
  /** Queries whose attention has been read: positions `0 … observedUntil − 1`. */
  private observedUntil = 0;
  /** Samples in each entry's current frame (the same for every entry: frames are global). */
  private phase = 0;
  private readonly magnitudes = new Float32Array(SPECTROGRAM_BINS);

  constructor(kvHeads: number) {
    this.heads = Array.from({ length: kvHeads }, () => new HeadMemory());
  }

  /**
   * Re-aligns every head to the observation's live entries and folds in the attention of the
   * queries since the previous update.
   *
   * @throws LetheError `E_ARG` naming `observation.attention` when it is missing, or
   *   `observation.window` when it holds fewer queries than have been processed since the
   *   previous update (NAMM must see every query's attention: rounds at most `window` apart, and
   *   prefill chunks ending at those rounds).
   */
  update(observation: LayerObservation): void {
    const { kvHeads, queryHeads, maxLive, step, window, attention } = observation;
    const fresh = step - this.observedUntil;
    if (fresh > 0 && attention === undefined) {
      throw new LetheError(
        'E_ARG',
        'NAMM reads the attention of the recent queries',
        'observation.attention',
      );
    }
    if (fresh > window) {
      throw new LetheError(
        'E_ARG',
        `holds ${window} queries but ${fresh} were processed since NAMM's last round at token ${this.observedUntil}: rounds must be at most the attention window apart (prefill in chunks ending at them)`,
        'observation.window',
      );
    }
    for (let h = 0; h < kvHeads; h++) {
      const start = h * maxLive;
      this.heads[h]!.align(
        observation.positions.subarray(start, start + observation.liveCounts[h]!),
      );
    }
    const group = queryHeads / kvHeads;
    for (let q = this.observedUntil; q < step; q++) {
      const row = (q - (step - window)) * queryHeads * maxLive;
      for (let h = 0; h < kvHeads; h++) {
        const memory = this.heads[h]!;
        for (let i = 0; i < memory.size; i++) {
          let sum = 0;
          for (let g = 0; g < group; g++) sum += attention![row + (h * group + g) * maxLive + i]!;
          memory.current[i * STFT_HOP + this.phase] = sum / group;
        }
      }
      this.phase++;
      if (this.phase === STFT_HOP) this.completeFrame();
    }
    this.observedUntil = Math.max(this.observedUntil, step);
  }

  private completeFrame(): void {
    for (const memory of this.heads) {
      for (let i = 0; i < memory.size; i++) {
        frameMagnitudes(
          memory.previous,
          i * STFT_HOP,
          memory.current,
          i * STFT_HOP,
          this.magnitudes,
          0,
        );
        foldFrame(memory.ema, i * SPECTROGRAM_BINS, this.magnitudes, SPECTROGRAM_BINS);
      }
      memory.advanceFrame();
    }
    this.phase = 0;
  }
}
