import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { cacheFor, lively, takeLogits, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('no tensor leaks', () => {
  it('200 batched decode steps with evictions and controls keep the tensor count flat', () => {
    const config = tinyConfig({ model_type: 'qwen2' });
    const model = lively(config, 51);
    const caches = [cacheFor(config, { queryWindow: 4, trackAttention: true }), cacheFor(config)];
    takeLogits(model.prefill(caches, [Int32Array.of(1, 2, 3), Int32Array.of(4, 5)]));
    const controls = [[{ mlpKeep: 0.5, activationBits: 6 }, undefined], undefined];
    const step = (s: number) => {
      const out = model.decodeStep(caches, Int32Array.of(s % 37, (3 * s) % 37), controls);
      out.logits.dispose();
      out.hidden.dispose();
      for (const cache of caches) {
        for (let l = 0; l < config.num_hidden_layers; l++) {
          const live = cache.liveCounts(l)[0]!;
          // keep the cache bounded: drop the oldest entry once 12 are live
          if (live > 12)
            cache.keep(l, {
              granularity: 'layer',
              keep: Int32Array.from({ length: live - 1 }, (_, i) => i + 1),
            });
        }
      }
    };
    step(0);
    const before = tf.memory().numTensors;
    for (let s = 1; s <= 200; s++) step(s);
    expect(tf.memory().numTensors).toBe(before);
    const ids = tf.tensor2d([[1, 2, 3]], [1, 3], 'int32');
    const beforeForward = tf.memory().numTensors;
    const result = model.forward(ids, { capture: { attention: true, hidden: true, keys: true } });
    tf.dispose([result.logits, result.hidden!, ...result.attention!, ...result.keys!]);
    expect(tf.memory().numTensors).toBe(beforeForward);
    ids.dispose();
    const beforeDispose = tf.memory().numTensors;
    model.dispose();
    expect(tf.memory().numTensors).toBe(beforeDispose - model.parameters.size);
  });
});
