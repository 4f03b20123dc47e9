import type { LayerControls } from '@lethe/kv-cache';
import { initBackend, Rng, tf } from '@lethe/tensor';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { channelKeepMask, fakeQuantizeRows, quantizationLevels } from '../../src/decoder/index';
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

const config = tinyConfig({ model_type: 'qwen2' });
const KV = config.num_key_value_heads;

describe('attention controls in decode', () => {
  it('readPages equals masking the keys outside the pages', () => {
    const model = lively(config, 31);
    const T = 11; // prefill 10 (pages of 4: [0-3] [4-7] [8-9]), decode the 11th
    const tokens = randomTokens(8, T, config.vocab_size);
    const cache = cacheFor(config, { pageSize: 4 });
    takeLogits(model.prefill([cache], [tokens.slice(0, T - 1)]));
    const pages = [
      [Int32Array.of(0, 2), Int32Array.of(1)],
      [Int32Array.of(2), Int32Array.of(0, 1, 2)],
    ];
    const controls = pages.map((readPages): LayerControls => ({ readPages }));
    const [decoded] = takeLogits(
      model.decodeStep([cache], Int32Array.of(tokens[T - 1]!), [controls]),
    );
    const masks = pages.map((perHead) => {
      const mask = new Float32Array(KV * T * T);
      perHead.forEach((list, h) => {
        for (let t = 0; t < T; t++) {
          for (let j = 0; j <= t; j++) {
            const read = t < T - 1 || j === T - 1 || list.includes(Math.floor(j / 4));
            mask[(h * T + t) * T + j] = read ? 1 : 0;
          }
        }
      });
      return tf.tensor4d(mask, [1, KV, T, T]);
    });
    const masked = forwardRows(model, tokens, { masks });
    const dense = forwardRows(model, tokens);
    expect(maxAbsDiff(decoded!, masked[T - 1]!)).toBeLessThan(1e-4);
    expect(maxAbsDiff(decoded!, dense[T - 1]!)).toBeGreaterThan(1e-3);
    tf.dispose(masks);
    model.dispose();
  });

  it('attentionBias in decode equals keyBias in the parallel forward', () => {
    // A key bias in the forward acts on every query row; the cache holds keys and values
    // computed without it. They agree when the bias sits in the last layer, whose outputs at
    // earlier positions feed nothing but those positions' logits.
    const model = lively(config, 32);
    const T = 8;
    const tokens = randomTokens(9, T, config.vocab_size);
    const cache = cacheFor(config);
    takeLogits(model.prefill([cache], [tokens.slice(0, T - 1)]));
    const bias = new Rng(4).normal(KV * (T - 1), 0, 1.5);
    const controls: LayerControls[] = [{}, { attentionBias: bias }];
    const [decoded] = takeLogits(
      model.decodeStep([cache], Int32Array.of(tokens[T - 1]!), [controls]),
    );
    // forward: same bias on the T−1 cached keys, 0 on the new token's own key
    const full = new Float32Array(KV * T);
    for (let h = 0; h < KV; h++) full.set(bias.subarray(h * (T - 1), (h + 1) * (T - 1)), h * T);
    const keyBias = [undefined, tf.tensor3d(full, [1, KV, T])];
    const biased = forwardRows(model, tokens, { keyBias });
    expect(maxAbsDiff(decoded!, biased[T - 1]!)).toBeLessThan(1e-4);
    expect(maxAbsDiff(decoded!, forwardRows(model, tokens)[T - 1]!)).toBeGreaterThan(1e-3);
    tf.dispose(keyBias);
    model.dispose();
  });

  it('a gate hook (GSA) stores gates and matches the forward with the same hook', () => {
    const model = lively(config, 33);
    const rng = new Rng(12);
    const gateWeights = [0, 1].map(() =>
      tf.tensor2d(rng.normal(config.hidden_size * KV, 0, 0.5), [config.hidden_size, KV]),
    );
    const hook = (layer: number, x: tf.Tensor) =>
      tf.tidy(() => {
        const [batch, length] = x.shape as [number, number, number];
        const logits = tf.matMul(tf.reshape(x, [batch * length, -1]), gateWeights[layer]!);
        const logGate = tf.logSigmoid(tf.reshape(logits, [batch, length, KV]));
        return tf.transpose(logGate, [0, 2, 1]);
      });
    const tokens = randomTokens(10, 9, config.vocab_size);
    const reference = forwardRows(model, tokens, { keyBias: hook });
    const cache = cacheFor(config, { storeGates: true });
    const [first] = takeLogits(model.prefill([cache], [tokens.slice(0, 5)], { keyBias: hook }));
    expect(maxAbsDiff(first!, reference[4]!)).toBeLessThan(1e-4);
    for (let t = 5; t < tokens.length; t++) {
      const [row] = takeLogits(
        model.decodeStep([cache], Int32Array.of(tokens[t]!), undefined, { keyBias: hook }),
      );
      expect(maxAbsDiff(row!, reference[t]!)).toBeLessThan(1e-4);
    }
    const gates = cache.view(0).gates!;
    expect(gates.every((g) => g > 0 && g < 1)).toBe(true);
    expect(maxAbsDiff(reference[8]!, forwardRows(model, tokens)[8]!)).toBeGreaterThan(1e-3);
    // gated caches refuse steps without the hook, plain caches refuse the hook
    expect(() => model.decodeStep([cache], Int32Array.of(1))).toThrow(/storeGates|gates/);
    expect(() => model.prefill([cacheFor(config)], [Int32Array.of(1)], { keyBias: hook })).toThrow(
      /storeGates/,
    );
    tf.dispose(gateWeights);
    model.dispose();
  });
});

describe('MLP controls', () => {
  it('mlpKeep rate 1 is a no-op; a 0/1 mask and a rate change the logits', () => {
    const model = lively(config, 41);
    const tokens = randomTokens(2, 6, config.vocab_size);
    const run = (controls?: (LayerControls | undefined)[]) => {
      const cache = cacheFor(config);
      takeLogits(model.prefill([cache], [tokens.slice(0, 5)]));
      return takeLogits(
        model.decodeStep([cache], Int32Array.of(tokens[5]!), controls && [controls]),
      )[0]!;
    };
    const dense = run();
    expect(maxAbsDiff(run([{ mlpKeep: 1 }, { mlpKeep: 1 }]), dense)).toBe(0);
    expect(maxAbsDiff(run([{ mlpKeep: new Uint8Array(64).fill(1) }, undefined]), dense)).toBe(0);
    expect(maxAbsDiff(run([{ mlpKeep: 0.25 }, undefined]), dense)).toBeGreaterThan(1e-3);
    model.dispose();
  });

  it('prefill with MLP controls equals the parallel forward with the same controls', () => {
    const model = lively(config, 42);
    const tokens = randomTokens(3, 7, config.vocab_size);
    const mask = Uint8Array.from({ length: 64 }, (_, i) => (i % 3 === 0 ? 0 : 1));
    const layerControls: LayerControls[] = [{ mlpKeep: mask, activationBits: 3 }, { mlpKeep: 0.4 }];
    const forward = forwardRows(model, tokens, { controls: layerControls });
    const [prefilled] = takeLogits(
      model.prefill([cacheFor(config)], [tokens], { controls: [layerControls] }),
    );
    expect(maxAbsDiff(prefilled!, forward[6]!)).toBeLessThan(1e-4);
    expect(maxAbsDiff(prefilled!, forwardRows(model, tokens)[6]!)).toBeGreaterThan(1e-3);
    model.dispose();
  });

  it('top-k channel keep matches a brute-force sort', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 0, max: 1000 }),
        (batch, length, channels, seed) => {
          const rng = new Rng(seed);
          const values = rng.normal(batch * length * channels);
          const specs = Array.from({ length: batch }, (_, b) =>
            b === 1
              ? Uint8Array.from(rng.uniform(channels), (u) => (u < 0.5 ? 1 : 0))
              : 0.05 + 0.95 * rng.uniform(1)[0]!,
          );
          const activations = tf.tensor3d(values, [batch, length, channels]);
          const mask = channelKeepMask(activations, specs)!;
          const got = mask.dataSync();
          tf.dispose([activations, mask]);
          for (let b = 0; b < batch; b++) {
            const spec = specs[b]!;
            for (let t = 0; t < length; t++) {
              const row = (b * length + t) * channels;
              const expected = new Uint8Array(channels);
              if (typeof spec === 'number') {
                const order = Array.from({ length: channels }, (_, i) => i).sort(
                  (i, j) => Math.abs(values[row + j]!) - Math.abs(values[row + i]!),
                );
                for (const i of order.slice(0, Math.ceil(spec * channels))) expected[i] = 1;
              } else {
                expected.set(spec);
              }
              expect(Array.from(got.subarray(row, row + channels))).toEqual(Array.from(expected));
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('MLP controls in the forward are differentiable; pruned channels get no gradient', () => {
    const model = lively(config, 45);
    const ids = tf.tensor2d([[1, 2, 3, 4]], [1, 4], 'int32');
    const mask = Uint8Array.from({ length: 64 }, (_, i) => (i % 4 === 0 ? 0 : 1));
    const controls: LayerControls[] = [{ mlpKeep: mask, activationBits: 4 }, { mlpKeep: 0.5 }];
    const down = model.parameters.get('model.layers.0.mlp.down_proj.weight')!;
    const { value, grads } = tf.variableGrads(
      () => tf.sum(tf.square(model.forward(ids, { controls }).logits)) as tf.Scalar,
      [down],
    );
    const gradient = grads[down.name]!.arraySync() as number[][];
    for (const row of gradient) {
      row.forEach((g, i) => {
        if (mask[i] === 0) expect(g).toBe(0);
      });
    }
    expect(gradient.flat().some((g) => Math.abs(g) > 1e-4)).toBe(true);
    tf.dispose([ids, value, ...Object.values(grads)]);
    model.dispose();
  });

  it('channelKeepMask rejects bad specs', () => {
    const activations = tf.zeros([1, 1, 4]);
    expect(() => channelKeepMask(activations, [0])).toThrow(/E_BUDGET/);
    expect(() => channelKeepMask(activations, [1.5])).toThrow(/E_BUDGET/);
    expect(() => channelKeepMask(activations, [new Uint8Array(3)])).toThrow(/E_SHAPE/);
    expect(() => channelKeepMask(activations, [Uint8Array.of(0, 1, 2, 1)])).toThrow(/E_ARG/);
    expect(() => channelKeepMask(activations, [0.5, 0.5])).toThrow(/E_SHAPE/);
    expect(() => channelKeepMask(activations, [[1, 1, 1, 1] as unknown as Uint8Array])).toThrow(
      /E_ARG/,
    );
    expect(channelKeepMask(activations, [undefined])).toBeUndefined();
    activations.dispose();
  });
});

describe('fake quantisation', () => {
  it('matches the closed form on a hand example (round half to even)', () => {
    const x = tf.tensor2d([1, -0.5, 0.26, 0, 0, 0, 0, 0, -4, 2, 1, 0.5], [3, 4]);
    const three = fakeQuantizeRows(x, quantizationLevels(3));
    const two = fakeQuantizeRows(x, quantizationLevels(2));
    // 3 bits: L = 3. Row 0: scale 1/3, x/s = [3, −1.5, 0.78, 0] → [3, −2, 1, 0].
    // Row 2: scale 4/3, x/s = [−3, 1.5, 0.75, 0.375] → [−3, 2, 1, 0].
    const expectedThree = [1, -2 / 3, 1 / 3, 0, 0, 0, 0, 0, -4, 8 / 3, 4 / 3, 0];
    // 2 bits: L = 1. Row 0: scale 1 → [1, −0, 0, 0]; row 2: scale 4, [−1, 0.5, 0.25, 0.125] → [−1, 0, 0, 0].
    const expectedTwo = [1, 0, 0, 0, 0, 0, 0, 0, -4, 0, 0, 0];
    expect(maxAbsDiff(three.dataSync(), expectedThree)).toBeLessThan(1e-6);
    expect(maxAbsDiff(two.dataSync(), expectedTwo)).toBeLessThan(1e-6);
    tf.dispose([x, three, two]);
  });

  it('has the straight-through gradient', () => {
    const x = tf.tensor2d([0.3, -1.2, 0.05, 2, 0.7, -0.1], [2, 3]);
    const weight = tf.tensor2d([1, 2, 3, -1, -2, -3], [2, 3]);
    const grad = tf.grad((input: tf.Tensor) => tf.sum(tf.mul(fakeQuantizeRows(input, 3), weight)))(
      x,
    );
    expect(Array.from(grad.dataSync())).toEqual([1, 2, 3, -1, -2, -3]);
    tf.dispose([x, weight, grad]);
  });

  it('levels are 2^(b−1) − 1 for b in [2, 16]; other widths are rejected', () => {
    expect(quantizationLevels(2)).toBe(1);
    expect(quantizationLevels(8)).toBe(127);
    expect(quantizationLevels(16)).toBe(32767);
    for (const bad of [1, 17, 4.5, Number.NaN])
      expect(() => quantizationLevels(bad)).toThrow(/E_ARG/);
  });

  it('activationBits 16 is the dense path (App. E.3); 2 bits moves the logits', () => {
    const model = lively(config, 43);
    const tokens = randomTokens(5, 4, config.vocab_size);
    const run = (bits?: number) => {
      const controls =
        bits === undefined ? undefined : [[{ activationBits: bits }, { activationBits: bits }]];
      return takeLogits(
        model.prefill([cacheFor(config)], [tokens], controls ? { controls } : {}),
      )[0]!;
    };
    const dense = run();
    expect(maxAbsDiff(run(16), dense)).toBe(0);
    expect(maxAbsDiff(run(2), dense)).toBeGreaterThan(1e-2);
    expect(() => run(1)).toThrow(/activationBits/);
    model.dispose();
  });
});

describe('control validation', () => {
  it('rejects mis-shaped attention controls without touching the cache', () => {
    const model = lively(config, 44);
    const cache = cacheFor(config, { pageSize: 4 });
    takeLogits(model.prefill([cache], [randomTokens(1, 6, config.vocab_size)]));
    const step = (controls: LayerControls) => () =>
      model.decodeStep([cache], Int32Array.of(3), [[controls, undefined]]);
    expect(step({ attentionBias: new Float32Array(5) })).toThrow(/E_SHAPE.*attentionBias/);
    expect(step({ attentionBias: new Float32Array(KV * 6).fill(Number.NaN) })).toThrow(
      /E_ARG.*attentionBias/,
    );
    expect(step({ readPages: [Int32Array.of(0)] })).toThrow(/E_SHAPE.*readPages/);
    expect(step({ readPages: [Int32Array.of(2), Int32Array.of(0)] })).toThrow(/E_ARG.*readPages/);
    expect(() => model.decodeStep([cache], Int32Array.of(3), [[undefined]])).toThrow(/E_SHAPE/);
    expect(cache.length(0)).toBe(6);
    expect(cache.length(1)).toBe(6);
    const ids = tf.tensor2d([[1, 2]], [1, 2], 'int32');
    expect(() => model.forward(ids, { controls: [{ readPages: [] }, undefined] })).toThrow(/E_ARG/);
    ids.dispose();
    model.dispose();
  });
});
