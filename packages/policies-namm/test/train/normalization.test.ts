import { DecoderModel, generate } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPECTROGRAM_BINS } from '../../src/features/stft';
import { identityNormalization } from '../../src/features/token-features';
import { NammPolicy } from '../../src/policy/namm-policy';
import { measureSpectrogramNormalization } from '../../src/train/measure-normalization';
import { SpectrogramStatistics } from '../../src/train/spectrogram-statistics';
import { TINY_CONFIG, toyTask } from './fixtures';

/** Each bin's mean and population standard deviation over `rows`, in two passes. */
function twoPass(rows: readonly Float32Array[]): { mean: number[]; std: number[] } {
  const mean = Array.from(
    { length: SPECTROGRAM_BINS },
    (_, k) => rows.reduce((s, r) => s + r[k]!, 0) / rows.length,
  );
  const std = mean.map((m, k) =>
    Math.sqrt(rows.reduce((s, r) => s + (r[k]! - m) ** 2, 0) / rows.length),
  );
  return { mean, std };
}

/** Equal to float32 rounding: within 2⁻²² of each value's magnitude (at least 1e-9). */
function expectNormalization(
  actual: { mean: Float32Array; std: Float32Array },
  expected: { mean: number[]; std: number[] },
): void {
  for (const field of ['mean', 'std'] as const) {
    for (let k = 0; k < SPECTROGRAM_BINS; k++) {
      const e = expected[field][k]!;
      expect(Math.abs(actual[field][k]! - e)).toBeLessThanOrEqual(
        Math.max(Math.abs(e) * 2 ** -22, 1e-9),
      );
    }
  }
}

describe('SpectrogramStatistics', () => {
  it('equals a two-pass mean and standard deviation on synthetic rows', () => {
    const stride = 25;
    const rows = Array.from({ length: 300 }, (_, i) =>
      Float32Array.from(
        { length: stride },
        (_, k) => 1000 + Math.sin(i * 1.3 + k) * (k + 1) + k * 0.01 * i,
      ),
    );
    const statistics = new SpectrogramStatistics();
    // Fed in uneven batches of rows `stride` apart, as NAMM's heads come.
    for (const [start, end] of [
      [0, 7],
      [7, 150],
      [150, 300],
    ] as const) {
      const batch = new Float32Array((end - start) * stride);
      rows.slice(start, end).forEach((row, i) => batch.set(row, i * stride));
      statistics.add(batch, end - start, stride);
    }
    expect(statistics.count).toBe(300);
    expectNormalization(statistics.normalization(), twoPass(rows));
  });
});

describe('measureSpectrogramNormalization', () => {
  let model: DecoderModel;
  beforeAll(async () => {
    await initBackend('wasm');
    model = DecoderModel.random(TINY_CONFIG, 3);
  });
  afterAll(() => model.dispose());

  const task = toyTask('toy', 1);
  const requests = [0, 1, 2].map((i) => ({
    prompt: task.prompt(task.example(0, i)),
    maxNewTokens: 8,
    stop: {},
  }));

  it('is the two-pass statistics of every entry NAMM scores at every round, on the full cache', async () => {
    const rows: Float32Array[] = [];
    const policy = new NammPolicy({
      scorer: {
        spec: { kind: 'mlp', features: 25, depth: 1 },
        parameterCount: 0,
        score(x, n, out) {
          for (let i = 0; i < n; i++) rows.push(x.slice(i * 25, i * 25 + SPECTROGRAM_BINS));
          out.fill(0, 0, n);
        },
      },
      features: 'spectrogram',
      normalization: identityNormalization(),
      updateInterval: 16,
    });
    const full = await generate({
      model,
      prompts: requests.map((r) => r.prompt),
      maxNewTokens: 8,
      sampling: { temperature: 0 },
      eviction: policy,
    });
    expect(full.stats.caches.every((c) => c.liveTotal === c.peakTotal)).toBe(true);
    expect(rows.length).toBeGreaterThan(100);
    const measured = await measureSpectrogramNormalization(model, requests, { updateInterval: 16 });
    expectNormalization(measured, twoPass(rows));
    expect(measured.std.some((s) => s > 0)).toBe(true);
  });

  it('refuses prompts too short for a round', async () => {
    await expectLetheRejection(
      measureSpectrogramNormalization(
        model,
        [{ prompt: Int32Array.of(1, 2), maxNewTokens: 2, stop: {} }],
        {
          updateInterval: 64,
        },
      ),
      'E_ARG',
      'requests',
    );
  });
});
