import { initBackend, tensorMemoryHeadroom, tf, WASM_HEAP_MAX_BYTES } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { attentionBytes } from '../../src/decoder/attention-memory';
import type { ForwardOptions } from '../../src/decoder/index';
import { stepBytes } from '../../src/decoder/step-memory';
import { cacheFor, lively, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

// 4 query heads, 2 layers; a context long enough that only memory limits the sequence.
const config = tinyConfig({ max_position_embeddings: 16_384 });
const ids = (batch: number, length: number) =>
  tf.tensor2d(
    Int32Array.from({ length: batch * length }, (_, i) => 1 + (i % 30)),
    [batch, length],
    'int32',
  );

describe('attention and steps past the wasm heap are refused before anything is allocated (regression)', () => {
  it('estimates 4·B·Hq·T·S bytes of scores times the tensors alive at once, and per-token tensors while recording', () => {
    const widths = { vocab: 50, hidden: 16, intermediate: 24 };
    const extent = { batch: 2, queryHeads: 4, queries: 100, keys: 300, layers: 3, ...widths };
    const scores = 4 * 2 * 4 * 100 * 300;
    const perToken = 4 * 2 * 100 * (12 * 50 + 32 * 3 * (16 + 24));
    expect(attentionBytes(extent, 'inference')).toBe(scores * (6 + 2 * 3));
    expect(attentionBytes(extent, 'recomputed')).toBe(scores * (6 + 3 * 3) + perToken);
    expect(attentionBytes(extent, 'taped')).toBe(scores * (7 + 26 * 3) + perToken);
    // The sizes tested below: one 6,000-token sequence needs more than the whole heap …
    expect(
      attentionBytes({ ...extent, batch: 1, queries: 6000, keys: 6000, layers: 2 }, 'inference'),
    ).toBeGreaterThan(WASM_HEAP_MAX_BYTES);
    // … and 2,600 tokens train through recomputed attention but not with the tape holding it.
    const training = { ...extent, batch: 1, queries: 2600, keys: 2600, layers: 2 };
    expect(attentionBytes(training, 'recomputed')).toBeLessThan(tensorMemoryHeadroom());
    expect(attentionBytes(training, 'taped')).toBeGreaterThan(WASM_HEAP_MAX_BYTES);
    // NGC's replay of 4 rollouts of 820 tokens on a suite model ran 120 updates: still admitted.
    const replay = {
      batch: 4,
      queryHeads: 4,
      queries: 820,
      keys: 820,
      layers: 3,
      vocab: 771,
      hidden: 64,
      intermediate: 128,
    };
    expect(attentionBytes(replay, 'taped')).toBeLessThan(WASM_HEAP_MAX_BYTES - 64e6);
  });

  it("the recorded estimate bounds the engine's peak over a forward and backward, blocked or whole", async () => {
    const model = lively(config, 35);
    const input = ids(1, 1024);
    const extent = {
      batch: 1,
      queryHeads: 4,
      queries: 1024,
      keys: 1024,
      layers: 2,
      vocab: config.vocab_size,
      hidden: config.hidden_size,
      intermediate: config.intermediate_size,
    };
    const peakOf = async (options: ForwardOptions) => {
      const before = tf.memory().numBytes;
      const profile = await tf.profile(() => {
        const { value, grads } = tf.variableGrads(
          () => tf.mean(model.forward(input, options).logits) as tf.Scalar,
        );
        tf.dispose([value, ...Object.values(grads)]);
      });
      return profile.peakBytes - before;
    };
    // key biases keep the attention whole (recomputed, not blocked): what the estimate measured
    const keyBias = [0, 1].map(() => tf.zeros([1, 2, 1024]));
    const whole = await peakOf({ keyBias });
    expect(whole).toBeLessThan(attentionBytes(extent, 'recomputed'));
    expect(whole).toBeGreaterThan(attentionBytes(extent, 'recomputed') / 2);
    // the causal mask alone runs in blocks and needs less
    const blocked = await peakOf({});
    expect(blocked).toBeLessThan(whole / 2);
    tf.dispose(keyBias);
    input.dispose();
    model.dispose();
  });

  it("the taped estimate bounds the engine's peak of a replay with per-layer masks and captured probabilities, at 1 and 3 layers", async () => {
    // NGC's replay: a mask per layer, the probabilities captured and read by the loss
    for (const layers of [1, 3]) {
      const shaped = tinyConfig({ num_hidden_layers: layers, vocab_size: 200 });
      const model = lively(shaped, 36);
      const [batch, length] = [4, 256];
      const input = ids(batch, length);
      const mask = tf.zeros([batch, 1, length, length]);
      const before = tf.memory().numBytes;
      const profile = await tf.profile(() => {
        const { value, grads } = tf.variableGrads(() => {
          const out = model.forward(input, {
            masks: Array.from({ length: layers }, () => mask as tf.Tensor4D),
            capture: { attention: true },
          });
          return tf.add(tf.mean(out.logits), tf.mean(out.attention![0]!)) as tf.Scalar;
        });
        tf.dispose([value, ...Object.values(grads)]);
      });
      const peak = profile.peakBytes - before;
      const estimate = attentionBytes(
        {
          batch,
          queryHeads: 4,
          queries: length,
          keys: length,
          layers,
          vocab: 200,
          hidden: shaped.hidden_size,
          intermediate: shaped.intermediate_size,
        },
        'taped',
      );
      expect(peak).toBeLessThan(estimate);
      expect(peak).toBeGreaterThan(estimate * 0.6);
      tf.dispose([input, mask]);
      model.dispose();
    }
  });

  it("a replay of 16 rollouts of 480 tokens on a suite model's shape is refused, not let through to overflow the heap (regression)", () => {
    // the shape that aborted the wasm module under the earlier count (6 + 20 · layers)
    const suite = tinyConfig({
      num_hidden_layers: 3,
      hidden_size: 64,
      intermediate_size: 128,
      vocab_size: 771,
      max_position_embeddings: 4096,
    });
    const model = lively(suite, 37);
    const [batch, length] = [16, 480];
    const input = ids(batch, length);
    const mask = tf.zeros([batch, 1, length, length]);
    const tensors = tf.memory().numTensors;
    const error = expectLetheError(
      () =>
        tf.variableGrads(
          () =>
            tf.mean(
              model.forward(input, {
                masks: [mask, mask, mask] as tf.Tensor4D[],
                capture: { attention: true },
              }).logits,
            ) as tf.Scalar,
        ),
      'E_SHAPE',
      'inputIds',
    );
    expect(error.message).toContain('480 queries over 480 keys (batch 16');
    expect(tf.memory().numTensors).toBe(tensors);
    tf.dispose([input, mask]);
    model.dispose();
  });

  it('forward: E_SHAPE naming inputIds and the size, no tensor left behind', () => {
    const model = lively(config, 31);
    for (const [batch, length] of [
      [1, 6000],
      [64, 1200],
    ] as const) {
      const input = ids(batch, length);
      const tensors = tf.memory().numTensors;
      const error = expectLetheError(() => model.forward(input), 'E_SHAPE', 'inputIds');
      expect(error.message).toMatch(/needs about \d+\.\d\d GB of tensor memory/);
      expect(error.message).toContain(`${length} queries over ${length} keys (batch ${batch}`);
      expect(tf.memory().numTensors).toBe(tensors);
      input.dispose();
    }
    model.dispose();
  });

  it('forward while recording gradients with the probabilities captured counts what the tape keeps', () => {
    const model = lively(config, 32);
    const input = ids(1, 2600);
    const tensors = tf.memory().numTensors;
    const error = expectLetheError(
      () =>
        tf.variableGrads(
          () => tf.mean(model.forward(input, { capture: { attention: true } }).logits) as tf.Scalar,
        ),
      'E_SHAPE',
      'inputIds',
    );
    expect(error.message).toContain('recording gradients with the probabilities captured');
    expect(error.message).toContain('or no captured attention');
    expect(tf.memory().numTensors).toBe(tensors);
    input.dispose();
    model.dispose();
  });

  it('prefill: linear in its tokens, so a prompt the forward refuses runs', () => {
    const model = lively(config, 33);
    const cache = cacheFor(config);
    const prompt = Int32Array.from({ length: 6000 }, (_, i) => 1 + (i % 30));
    const out = model.prefill([cache], [prompt]);
    expect(cache.length(0)).toBe(6000);
    expect(Number.isFinite(out.logits.dataSync()[0]!)).toBe(true);
    tf.dispose([out.logits, out.hidden]);
    model.dispose();
  });

  it('prefill: E_SHAPE naming prompts when its rows outgrow the heap, the cache left empty', () => {
    // 6,000 rows of logits over a 100k vocabulary: 4.8 GB
    const wide = tinyConfig({ max_position_embeddings: 8192, vocab_size: 100_000 });
    const extent = {
      rows: 6000,
      logitRows: 6001,
      hiddenSize: 32,
      intermediateSize: 64,
      projections: 8 * 8,
      vocabSize: 100_000,
    };
    expect(stepBytes(extent)).toBe(4 * (6000 * (16 * 32 + 6 * 64 + 2 * 64) + 6001 * 2 * 100_000));
    const model = lively(wide, 34);
    const cache = cacheFor(wide);
    const prompt = Int32Array.from({ length: 6000 }, (_, i) => 1 + (i % 30));
    const tensors = tf.memory().numTensors;
    const error = expectLetheError(
      () => model.prefill([cache], [prompt], { everyPosition: [true] }),
      'E_SHAPE',
      'prompts',
    );
    expect(error.message).toMatch(
      /a step of 6000 tokens \(6001 of them with logits\) needs about 4\.\d\d GB/,
    );
    expect(tf.memory().numTensors).toBe(tensors);
    expect(cache.length(0)).toBe(0);
    model.dispose();
  });
});
