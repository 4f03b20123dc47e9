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
  it('estimates 4·B·Hq·T·S bytes of scores times the tensors alive at once', () => {
    const extent = { batch: 2, queryHeads: 4, queries: 100, keys: 300, layers: 3 };
    const scores = 4 * 2 * 4 * 100 * 300;
    expect(attentionBytes(extent, 'inference')).toBe(scores * (6 + 2 * 3));
    expect(attentionBytes(extent, 'recomputed')).toBe(scores * (9 + 2 * 3));
    expect(attentionBytes(extent, 'taped')).toBe(scores * (6 + 20 * 3));
    // The sizes tested below: one 6,000-token sequence needs more than the whole heap …
    expect(
      attentionBytes({ ...extent, batch: 1, queries: 6000, keys: 6000, layers: 2 }, 'inference'),
    ).toBeGreaterThan(WASM_HEAP_MAX_BYTES);
    // … and 2,600 tokens train through recomputed attention but not with the tape holding it.
    const training = { ...extent, batch: 1, queries: 2600, keys: 2600, layers: 2 };
    expect(attentionBytes(training, 'recomputed')).toBeLessThan(tensorMemoryHeadroom());
    expect(attentionBytes(training, 'taped')).toBeGreaterThan(WASM_HEAP_MAX_BYTES);
  });

  it("the recorded estimate bounds the engine's peak over a forward and backward, blocked or whole", async () => {
    const model = lively(config, 35);
    const input = ids(1, 1024);
    const extent = { batch: 1, queryHeads: 4, queries: 1024, keys: 1024, layers: 2 };
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
