import { STFT_HOP } from './stft';

/** The EMA's discount per token, γ (Table 9 gives it per frame: γ^16 = 0.99^16). */
export const EMA_GAMMA = 0.99;

/**
 * The discount per STFT frame, γ^hop. Each completed frame updates a token's reduced spectrogram
 * as `ω ← γ^hop·ω + (1 − γ^hop)·|frame|`, so after a round the newest frame weighs `1 − γ^hop`, the
 * one before it `γ^hop·(1 − γ^hop)`, and the memory from before the round `γ^(hop·frames)` — the
 * reference code's weights (the paper's Eq. 4 without the `1 − γ^hop` factor, which only scales
 * the features and the normalisation divides out).
 */
export const FRAME_DISCOUNT = EMA_GAMMA ** STFT_HOP;

/** `ema[offset + k] ← FRAME_DISCOUNT·ema[offset + k] + (1 − FRAME_DISCOUNT)·frame[k]` for `k < width`. */
export function foldFrame(
  ema: Float32Array,
  offset: number,
  frame: Float32Array,
  width: number,
): void {
  for (let k = 0; k < width; k++) {
    ema[offset + k] = FRAME_DISCOUNT * ema[offset + k]! + (1 - FRAME_DISCOUNT) * frame[k]!;
  }
}
