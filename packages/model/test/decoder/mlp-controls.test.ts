import type { LayerControls } from '@lethe/kv-cache';
import { initBackend, Rng, tf } from '@lethe/tensor';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeQuantizeRows, quantizationLevels, swiGluMlp } from '../../src/decoder/index';
import {
  cacheFor,
  forwardRows,
  lively,
  maxAbsDiff,
  randomTokens,
  takeLogits,
  tinyConfig,
} from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig();

/** Plain-JS SwiGLU MLP of one token, `down(silu(gate·x) ⊙ up·x)`, weights `[out, in]` row-major. */
function referenceMlp(
  x: Float32Array,
  gate: Float32Array,
  up: Float32Array,
  down: Float32Array,
  inner: number,
): Float64Array {
  const width = x.length;
  const hidden = new Float64Array(inner);
  for (let i = 0; i < inner; i++) {
    let g = 0;
    let u = 0;
    for (let c = 0; c < width; c++) {
      g += gate[i * width + c]! * x[c]!;
      u += up[i * width + c]! * x[c]!;
    }
    hidden[i] = (g / (1 + Math.exp(-g))) * u;
  }
  const out = new Float64Array(width);
  for (let c = 0; c < width; c++) {
    let total = 0;
    for (let i = 0; i < inner; i++) total += down[c * inner + i]! * hidden[i]!;
    out[c] = total;
  }
  return out;
}

/** App. E.2 by brute force: keep the `⌈ρ·D⌉` channels of largest |x| (sorted), zero the rest. */
function keepTopInputs(x: Float32Array, rate: number): Float32Array {
  const count = Math.ceil(rate * x.length);
  const order = Array.from(x.keys()).sort((i, j) => Math.abs(x[j]!) - Math.abs(x[i]!));
  const kept = new Float32Array(x.length);
  for (const c of order.slice(0, count)) kept[c] = x[c]!;
  return kept;
}

describe('MLP input-channel pruning (mlpInputKeep, SOL App. E.2)', () => {
  it('equals the dense MLP on the top ⌈ρ·D⌉ input channels by |x|, per token and batch row', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 0, max: 1000 }),
        (batch, length, width, seed) => {
          const rng = new Rng(seed);
          const inner = 5;
          const x = rng.normal(batch * length * width);
          const [gate, up, down] = [inner * width, inner * width, width * inner].map((n) =>
            rng.normal(n),
          );
          const rates = Array.from({ length: batch }, (_, b) =>
            b === 1 ? undefined : 0.05 + 0.95 * rng.uniform(1)[0]!,
          );
          const controls = rates.map((mlpInputKeep): LayerControls => ({ mlpInputKeep }));
          const weights = {
            gate: tf.tensor2d(gate!, [inner, width]),
            up: tf.tensor2d(up!, [inner, width]),
            down: tf.tensor2d(down!, [width, inner]),
          };
          const input = tf.tensor3d(x, [batch, length, width]);
          const out = swiGluMlp(input, weights, controls);
          const got = out.dataSync();
          tf.dispose([input, out, ...Object.values(weights)]);
          for (let row = 0; row < batch * length; row++) {
            const token = x.slice(row * width, (row + 1) * width);
            const rate = rates[Math.floor(row / length)];
            const kept = rate === undefined ? token : keepTopInputs(token, rate);
            const expected = referenceMlp(kept, gate!, up!, down!, inner);
            const actual = got.subarray(row * width, (row + 1) * width);
            expect(maxAbsDiff(actual, expected)).toBeLessThan(1e-4);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('ρ = 1 is bit-identical to the dense model; ρ = 0.25 changes the logits', () => {
    const model = lively(config, 51);
    const tokens = randomTokens(6, 7, config.vocab_size);
    const run = (rate?: number) => {
      const controls =
        rate === undefined ? undefined : [[{ mlpInputKeep: rate }, { mlpInputKeep: rate }]];
      return takeLogits(
        model.prefill([cacheFor(config)], [tokens], controls ? { controls } : {}),
      )[0]!;
    };
    const dense = run();
    expect(maxAbsDiff(run(1), dense)).toBe(0);
    expect(maxAbsDiff(run(0.25), dense)).toBeGreaterThan(1e-3);
    model.dispose();
  });

  it('is chosen per token: chunked prefill, token-by-token decode and the forward agree', () => {
    const model = lively(config, 52);
    const tokens = randomTokens(7, 8, config.vocab_size);
    const layerControls: LayerControls[] = [
      { mlpInputKeep: 0.3 },
      { mlpInputKeep: 0.6, activationBits: 5 },
    ];
    const forward = forwardRows(model, tokens, { controls: layerControls });
    const cache = cacheFor(config);
    const [prefilled] = takeLogits(
      model.prefill([cache], [tokens.slice(0, 4)], { controls: [layerControls] }),
    );
    expect(maxAbsDiff(prefilled!, forward[3]!)).toBeLessThan(1e-4);
    for (let t = 4; t < tokens.length; t++) {
      const [decoded] = takeLogits(
        model.decodeStep([cache], Int32Array.of(tokens[t]!), [layerControls]),
      );
      expect(maxAbsDiff(decoded!, forward[t]!)).toBeLessThan(1e-4);
    }
    model.dispose();
  });

  it('rejects a rate outside (0, 1] and a mask, naming mlpInputKeep, leaking nothing', () => {
    const model = lively(config, 53);
    const cache = cacheFor(config);
    takeLogits(model.prefill([cache], [randomTokens(8, 4, config.vocab_size)]));
    const before = tf.memory().numTensors;
    for (const bad of [0, 1.5, -0.2, Number.NaN]) {
      expect(() =>
        model.decodeStep([cache], Int32Array.of(1), [[{ mlpInputKeep: bad }, undefined]]),
      ).toThrow(/E_BUDGET.*mlpInputKeep/);
    }
    const mask = new Uint8Array(config.hidden_size).fill(1) as unknown as number;
    expect(() =>
      model.decodeStep([cache], Int32Array.of(1), [[{ mlpInputKeep: mask }, undefined]]),
    ).toThrow(/E_ARG.*mlpInputKeep/);
    expect(tf.memory().numTensors).toBe(before);
    expect(cache.length(0)).toBe(4);
    model.dispose();
  });
});

describe('activation quantiser (SOL App. E.3)', () => {
  it('round trip: within half a step of the input, and a second pass changes nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 15 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 0, max: 1000 }),
        (bits, width, seed) => {
          const rng = new Rng(seed);
          const values = rng.normal(2 * width, 0, 3);
          const levels = quantizationLevels(bits);
          const x = tf.tensor2d(values, [2, width]);
          const once = fakeQuantizeRows(x, levels);
          const twice = fakeQuantizeRows(once, levels);
          const [a, b] = [once.dataSync(), twice.dataSync()];
          tf.dispose([x, once, twice]);
          for (let row = 0; row < 2; row++) {
            const slice = values.subarray(row * width, (row + 1) * width);
            const scale = Math.max(...Array.from(slice, Math.abs)) / levels;
            for (let c = 0; c < width; c++) {
              const i = row * width + c;
              expect(Math.abs(a[i]! - values[i]!)).toBeLessThanOrEqual(scale / 2 + 1e-6);
              // on the grid, up to float32 rounding of a value near `levels` steps
              const steps = a[i]! / scale;
              expect(Math.abs(Math.round(steps) - steps)).toBeLessThan(1e-4 + 2e-7 * levels);
              expect(Math.abs(b[i]! - a[i]!)).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(a[i]!)));
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
