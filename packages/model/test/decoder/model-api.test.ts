import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecoderModel } from '../../src/decoder/index';
import { expectedTensorNames } from '../../src/io/index';
import { cacheFor, lively, maxAbsDiff, takeLogits, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('construction and checkpoints', () => {
  it('random(): seeded, HF names, N(0, 0.02) matrices, unit norms, zero biases', () => {
    const config = tinyConfig({ model_type: 'qwen2' });
    const a = DecoderModel.random(config, 3);
    const b = DecoderModel.random(config, 3);
    const c = DecoderModel.random(config, 4);
    expect([...a.parameters.keys()].sort()).toEqual(expectedTensorNames(config).sort());
    const ta = a.toTensors();
    const tb = b.toTensors();
    const tc = c.toTensors();
    for (const name of Object.keys(ta)) expect(ta[name]!.data).toEqual(tb[name]!.data);
    expect(maxAbsDiff(ta['lm_head.weight']!.data, tc['lm_head.weight']!.data)).toBeGreaterThan(0);
    expect(ta['model.norm.weight']!.data.every((v) => v === 1)).toBe(true);
    expect(ta['model.layers.0.self_attn.q_proj.bias']!.data.every((v) => v === 0)).toBe(true);
    const w = ta['model.layers.1.mlp.down_proj.weight']!.data;
    const mean = w.reduce((s, v) => s + v, 0) / w.length;
    const std = Math.sqrt(w.reduce((s, v) => s + (v - mean) ** 2, 0) / w.length);
    expect(Math.abs(mean)).toBeLessThan(0.002);
    expect(std).toBeGreaterThan(0.018);
    expect(std).toBeLessThan(0.022);
    expect(ta['model.layers.1.mlp.down_proj.weight']!.shape).toEqual([32, 64]);
    for (const m of [a, b, c]) m.dispose();
  });

  it('toTensors → fromTensors round-trips bit-exactly and gives the same logits', () => {
    const config = tinyConfig({ tie_word_embeddings: true });
    const model = lively(config, 2);
    const copy = DecoderModel.fromTensors(config, model.toTensors());
    expect(copy.parameters.has('lm_head.weight')).toBe(false);
    const ids = tf.tensor2d([[3, 1, 4, 1, 5]], [1, 5], 'int32');
    const x = model.forward(ids).logits;
    const y = copy.forward(ids).logits;
    expect(maxAbsDiff(x.dataSync(), y.dataSync())).toBe(0);
    tf.dispose([ids, x, y]);
    model.dispose();
    copy.dispose();
  });

  it('fromTensors rejects missing, extra and mis-shaped tensors', () => {
    const config = tinyConfig();
    const tensors = DecoderModel.random(config, 1).toTensors();
    const { 'model.norm.weight': _dropped, ...missing } = tensors;
    expect(() => DecoderModel.fromTensors(config, missing)).toThrow(
      /E_CHECKPOINT.*model\.norm\.weight/,
    );
    const extra = {
      ...tensors,
      'model.layers.0.self_attn.q_proj.bias': { shape: [32], data: new Float32Array(32) },
    };
    expect(() => DecoderModel.fromTensors(config, extra)).toThrow(/E_CHECKPOINT/);
    const misShaped = {
      ...tensors,
      'model.norm.weight': { shape: [31], data: new Float32Array(31) },
    };
    expect(() => DecoderModel.fromTensors(config, misShaped)).toThrow(/E_CHECKPOINT/);
    const shortData = {
      ...tensors,
      'model.norm.weight': { shape: [32], data: new Float32Array(31) },
    };
    expect(() => DecoderModel.fromTensors(config, shortData)).toThrow(/E_CHECKPOINT/);
    expectLetheError(() => DecoderModel.fromTensors(config, null as never), 'E_ARG', 'tensors');
    expectLetheError(
      () => DecoderModel.fromTensors(config, { ...tensors, 'model.norm.weight': null as never }),
      'E_CHECKPOINT',
      'model.norm.weight',
    );
  });

  it('fromTensors refuses NaN / ±Infinity weights, naming the tensor (regression)', () => {
    const config = tinyConfig();
    const tensors = DecoderModel.random(config, 1).toTensors();
    const name = 'model.layers.1.self_attn.k_proj.weight';
    const poisoned = structuredClone(tensors);
    poisoned[name]!.data[7] = Number.NaN;
    const error = expectLetheError(
      () => DecoderModel.fromTensors(config, poisoned),
      'E_CHECKPOINT',
      name,
    );
    expect(error.message).toContain('the first NaN at index 7');
  });

  it('fromTensors takes a tied lm_head.weight equal to the embedding, refuses another (regression)', () => {
    const config = tinyConfig({ tie_word_embeddings: true });
    const tensors = DecoderModel.random(config, 4).toTensors();
    const embedding = tensors['model.embed_tokens.weight']!;
    const model = DecoderModel.fromTensors(config, {
      ...tensors,
      'lm_head.weight': { shape: embedding.shape, data: embedding.data.slice() },
    });
    expect(model.parameters.has('lm_head.weight')).toBe(false);
    model.dispose();
    const other = embedding.data.slice();
    other[3] = -other[3]!;
    expectLetheError(
      () =>
        DecoderModel.fromTensors(config, {
          ...tensors,
          'lm_head.weight': { shape: embedding.shape, data: other },
        }),
      'E_CHECKPOINT',
      'lm_head.weight',
    );
  });
});

describe('forward', () => {
  it('captures attention (rows sum to 1, causal), hidden and keys with the documented shapes', () => {
    const config = tinyConfig();
    const model = lively(config, 9);
    const ids = tf.tensor2d(
      [
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ],
      [2, 4],
      'int32',
    );
    const out = model.forward(ids, { capture: { attention: true, hidden: true, keys: true } });
    expect(out.logits.shape).toEqual([2, 4, 37]);
    expect(out.hidden!.shape).toEqual([2, 4, 32]);
    expect(out.keys!.map((k) => k.shape)).toEqual([
      [2, 2, 4, 8],
      [2, 2, 4, 8],
    ]);
    expect(out.attention!.map((a) => a.shape)).toEqual([
      [2, 4, 4, 4],
      [2, 4, 4, 4],
    ]);
    const probs = out.attention![1]!.arraySync();
    for (const head of probs.flat()) {
      head.forEach((row, t) => {
        expect(row.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 5);
        row.forEach((p, j) => {
          if (j > t) expect(p).toBe(0);
        });
      });
    }
    tf.dispose([ids, out.logits, out.hidden!, ...out.keys!, ...out.attention!]);
    model.dispose();
  });

  it('captures each layer’s attention input: what a key-bias hook (a gate) reads', () => {
    const config = tinyConfig();
    const model = lively(config, 9);
    const ids = tf.tensor2d([[1, 2, 3, 4, 5]], [1, 5], 'int32');
    const seen: number[][] = [];
    const out = model.forward(ids, {
      capture: { attentionInputs: true },
      keyBias: (_, x) => {
        seen.push([...(x.dataSync() as Float32Array)]);
        return undefined;
      },
    });
    expect(out.attentionInputs!.map((a) => a.shape)).toEqual([
      [1, 5, 32],
      [1, 5, 32],
    ]);
    out.attentionInputs!.forEach((input, l) => {
      expect(maxAbsDiff(input.dataSync(), seen[l]!)).toBe(0);
    });
    // Each layer has its own input (the hook is not handed one tensor twice).
    expect(maxAbsDiff(out.attentionInputs![0]!.dataSync(), seen[1]!)).toBeGreaterThan(0);
    tf.dispose([ids, out.logits, ...out.attentionInputs!]);
    model.dispose();
  });

  it('takes each layer’s visibility from a mask hook that reads the layer’s input, as from a list', () => {
    const config = tinyConfig();
    const model = lively(config, 9);
    const ids = tf.tensor2d([[1, 2, 3, 4, 5, 6]], [1, 6], 'int32');
    // visibility drawn from the input's values: layer l hides key j from row t when a value is negative
    const visibility = (l: number, x: Float32Array) =>
      Float32Array.from({ length: 2 * 36 }, (_, i) => (x[(i * 7 + l) % x.length]! < 0 ? 0 : 1));
    const before = tf.memory().numTensors;
    const seen: Float32Array[] = [];
    const hooked = model.forward(ids, {
      masks: (l, x) => {
        seen[l] = x.dataSync() as Float32Array;
        return tf.tensor4d(visibility(l, seen[l]), [1, 2, 6, 6]);
      },
    });
    expect(seen).toHaveLength(2);
    expect(tf.memory().numTensors).toBe(before + 1);
    const masks = seen.map((x, l) => tf.tensor4d(visibility(l, x), [1, 2, 6, 6]));
    const listed = model.forward(ids, { masks });
    expect(maxAbsDiff(hooked.logits.dataSync(), listed.logits.dataSync())).toBe(0);
    const plain = model.forward(ids);
    expect(maxAbsDiff(hooked.logits.dataSync(), plain.logits.dataSync())).toBeGreaterThan(0);
    expect(() => model.forward(ids, { masks: () => tf.ones([1, 3, 6, 6]) })).toThrow(
      /E_SHAPE.*masks\(0\)/,
    );
    tf.dispose([ids, ...masks, hooked.logits, listed.logits, plain.logits]);
    model.dispose();
  });

  it('validates its inputs', () => {
    const config = tinyConfig();
    const model = lively(config, 9);
    const ids = tf.tensor2d([[1, 2, 3]], [1, 3], 'int32');
    const bad = tf.tensor2d([[1, 37, 3]], [1, 3], 'int32');
    const floats = tf.tensor2d([[1, 2, 3]], [1, 3]);
    expect(() => model.forward(bad)).toThrow(/E_ARG.*inputIds/);
    expect(() => model.forward(floats as tf.Tensor2D)).toThrow(/E_SHAPE.*inputIds/);
    const wrongMask = tf.ones([1, 3, 3, 3]);
    expect(() => model.forward(ids, { masks: [wrongMask, undefined] })).toThrow(
      /E_SHAPE.*masks\[0\]/,
    );
    expect(() => model.forward(ids, { masks: [undefined] })).toThrow(/E_SHAPE.*masks/);
    const wrongBias = tf.zeros([1, 2, 4]);
    expect(() => model.forward(ids, { keyBias: [undefined, wrongBias] })).toThrow(
      /E_SHAPE.*keyBias\[1\]/,
    );
    expect(() => model.forward(ids, { keyBias: () => wrongBias })).toThrow(/E_SHAPE.*keyBias\(0\)/);
    const positions = tf.tensor2d([[0, 1, 2]], [1, 3]);
    expect(() => model.forward(ids, { positions })).toThrow(/E_DTYPE.*positions/);
    expectLetheError(() => model.forward(null as never), 'E_ARG', 'inputIds');
    expectLetheError(() => model.forward([[1, 2]] as never), 'E_ARG', 'inputIds');
    expectLetheError(() => model.forward(ids, null as never), 'E_ARG', 'options');
    tf.dispose([ids, bad, floats, wrongMask, wrongBias, positions]);
    model.dispose();
    expect(() => model.forward(ids)).toThrow(/E_STATE/);
  });
});

describe('cached steps validate before mutating', () => {
  it('rejects bad caches, tokens and controls', () => {
    const config = tinyConfig();
    const model = lively(config, 10);
    const cache = cacheFor(config);
    expect(() => model.prefill([cache], [Int32Array.of(1, 40)])).toThrow(/E_ARG.*prompts\[0\]/);
    expect(() => model.prefill([cache], [new Int32Array(0)])).toThrow(/E_ARG/);
    expect(() => model.prefill([cache, cache], [Int32Array.of(1), Int32Array.of(2)])).toThrow(
      /twice/,
    );
    expect(() => model.prefill([cache], [Int32Array.of(1), Int32Array.of(2)])).toThrow(/E_SHAPE/);
    const wrong = cacheFor(tinyConfig({ num_key_value_heads: 4 }));
    expect(() => model.prefill([wrong], [Int32Array.of(1)])).toThrow(/E_ARG.*caches\[0\]/);
    expect(() =>
      model.prefill([cacheFor(config, { storeValues: false })], [Int32Array.of(1)]),
    ).toThrow(/E_STATE/);
    expect(() => model.decodeStep([cache], [1] as unknown as Int32Array)).toThrow(/E_ARG.*tokens/);
    expectLetheError(() => model.prefill([cache], null as never), 'E_ARG', 'prompts');
    expectLetheError(
      () => model.prefill([cache], [Int32Array.of(1)], null as never),
      'E_ARG',
      'options',
    );
    expectLetheError(
      () => model.decodeStep([cache], Int32Array.of(1), undefined, null as never),
      'E_ARG',
      'options',
    );
    expect(() =>
      model.decodeStep([cache], Int32Array.of(1), [[undefined, undefined], undefined]),
    ).toThrow(/E_SHAPE.*controls/);
    expect(cache.length(0)).toBe(0);
    // a cache whose layers are out of step
    cache.append(0, new Float32Array(16), new Float32Array(16), Int32Array.of(0));
    expect(() => model.decodeStep([cache], Int32Array.of(1))).toThrow(/E_STATE.*layer 1/);
    model.dispose();
  });

  it('step outputs are the last-token logits [B, V] and final hidden [B, D]', () => {
    const config = tinyConfig();
    const model = lively(config, 10);
    const out = model.prefill(
      [cacheFor(config), cacheFor(config)],
      [Int32Array.of(1, 2), Int32Array.of(3)],
    );
    expect(out.logits.shape).toEqual([2, 37]);
    expect(out.hidden.shape).toEqual([2, 32]);
    const ids = tf.tensor2d([[1, 2]], [1, 2], 'int32');
    const forward = model.forward(ids, { capture: { hidden: true } });
    const hidden = forward.hidden!.dataSync().slice(32, 64);
    expect(maxAbsDiff(out.hidden.dataSync().slice(0, 32), hidden)).toBeLessThan(1e-5);
    tf.dispose([ids, forward.logits, forward.hidden!]);
    takeLogits(out);
    model.dispose();
  });
});
