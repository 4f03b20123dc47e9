import { describe, expect, it } from 'vitest';
import { LayerSpectrogram } from '../../src/features/layer-spectrogram';
import { FRAME_DISCOUNT } from '../../src/features/spectrogram-ema';
import {
  type AttentionHistory,
  hashedHistory,
  syntheticObservation,
} from '../synthetic-observation';

/** |DFT| of the Hann-windowed 32-sample frame, term by term. */
function magnitudes(frame: readonly number[]): number[] {
  return Array.from({ length: 17 }, (_, k) => {
    let re = 0;
    let im = 0;
    frame.forEach((x, n) => {
      const w = 0.5 * (1 - Math.cos((2 * Math.PI * n) / 32));
      re += w * x * Math.cos((2 * Math.PI * k * n) / 32);
      im -= w * x * Math.sin((2 * Math.PI * k * n) / 32);
    });
    return Math.hypot(re, im);
  });
}

/**
 * The closed form of a token's reduced spectrogram after the first `steps` queries: its attention
 * series x[q] (0 before the token and for q < 0), frames k = 0 … K − 1 over x[16k − 16 … 16k + 15],
 * ω = Σ_k (1 − d)·d^(K − 1 − k)·|frame_k| with d = γ^16.
 */
function closedForm(history: AttentionHistory, head: number, position: number, steps: number) {
  const x = (q: number) => (q < 0 || q < position ? 0 : history(head, q, position));
  const frames = Math.floor(steps / 16);
  const ema = new Array<number>(17).fill(0);
  for (let k = 0; k < frames; k++) {
    const frame = Array.from({ length: 32 }, (_, n) => x(16 * k - 16 + n));
    const weight = (1 - FRAME_DISCOUNT) * FRAME_DISCOUNT ** (frames - 1 - k);
    magnitudes(frame).forEach((m, b) => {
      ema[b]! += weight * m;
    });
  }
  return ema;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('LayerSpectrogram', () => {
  it.each([
    ['rounds every 64 tokens (n_up)', [64, 128, 192, 256]],
    ['irregular rounds, frames straddling them', [5, 40, 41, 100, 150, 160, 224, 250, 256]],
    ['one round after the prompt', [48]],
  ])('matches the EMA closed form over several rounds: %s', (_, rounds) => {
    const history = hashedHistory(3);
    const spectrogram = new LayerSpectrogram(2);
    let last = 0;
    for (const step of rounds) {
      spectrogram.update(
        syntheticObservation({
          kvHeads: 2,
          group: 2,
          live: [range(step), range(step)],
          step,
          window: step - last,
          history,
        }),
      );
      last = step;
    }
    for (const head of [0, 1]) {
      const memory = spectrogram.heads[head]!;
      for (const position of [0, 1, 17, 31, 63, last - 20, last - 1].filter((p) => p < last)) {
        const expected = closedForm(history, head, position, last);
        const got = [...memory.ema.subarray(position * 17, position * 17 + 17)];
        expected.forEach((e, b) => expect(got[b]).toBeCloseTo(e, 5));
      }
    }
  });

  it('forgets evicted entries and starts new ones from zero, keeping the rest', () => {
    const history = hashedHistory(5);
    const full = new LayerSpectrogram(1);
    const pruned = new LayerSpectrogram(1);
    const observe = (s: LayerSpectrogram, live: number[], step: number, window: number) =>
      s.update(syntheticObservation({ kvHeads: 1, group: 1, live: [live], step, window, history }));
    observe(full, range(32), 32, 32);
    observe(pruned, range(32), 32, 32);
    // Evict even positions from `pruned`; both then see 32 more queries.
    const odd = range(64).filter((p) => p >= 32 || p % 2 === 1);
    observe(full, range(64), 64, 32);
    observe(pruned, odd, 64, 32);
    expect([...pruned.heads[0]!.positions]).toEqual(odd);
    odd.forEach((p, i) => {
      expect([...pruned.heads[0]!.ema.subarray(i * 17, i * 17 + 17)]).toEqual([
        ...full.heads[0]!.ema.subarray(p * 17, p * 17 + 17),
      ]);
    });
  });

  it('refuses an observation window shorter than the queries since its last round', () => {
    const spectrogram = new LayerSpectrogram(1);
    const observation = syntheticObservation({
      kvHeads: 1,
      group: 1,
      live: [range(40)],
      step: 40,
      window: 32,
      history: hashedHistory(1),
    });
    expect(() => spectrogram.update(observation)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'observation.window' }),
    );
    const { attention: _, ...blind } = observation;
    expect(() => new LayerSpectrogram(1).update({ ...blind, window: 40 })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'observation.attention' }),
    );
  });
});
