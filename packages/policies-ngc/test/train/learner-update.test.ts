import { DecoderModel } from '@lethe/model';
import { AdamW, initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { learnerUpdate } from '../../src/train/learner-update';
import type { NgcRollout } from '../../src/train/rollout';
import { TINY_CONFIG } from './fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

/** A rollout of `length` generated tokens without eviction rounds. */
function rollout(length: number): NgcRollout {
  return {
    prompt: Int32Array.of(1, 4, 5),
    tokens: Int32Array.from({ length }, (_, i) => 3 + (i % 5)),
    tokenLogProbs: new Float32Array(length).fill(-1),
    finishReason: 'length',
    rounds: [],
    evictionRate: 0,
    peakEntries: 0,
  };
}

describe('learnerUpdate', () => {
  it('refuses a micro-batch whose replay would overflow the tensor memory, naming microBatch, before any parameter changes (regression)', async () => {
    const config = { ...TINY_CONFIG, max_position_embeddings: 4096 };
    const model = DecoderModel.random(config, 3);
    const optimizer = new AdamW(model.parameters, { weightDecay: 0 });
    const before = [...model.parameters.values()].map((v) => v.dataSync().slice());
    // 16 rollouts of 3,000 tokens replayed at once: ~16·2·3000² scores of 4 bytes per layer pass
    const rollouts = Array.from({ length: 16 }, () => rollout(3000));
    const tensors = tf.memory().numTensors;
    const error = await expectLetheRejection(
      learnerUpdate(model, optimizer, rollouts, new Float32Array(16).fill(0.5), {
        variant: 'no-evict',
        microBatch: 16,
        clipNorm: 1,
        lr: 1e-2,
        step: 7,
        temperature: 1,
        logits: { kind: 'log', temperature: 1 },
      }),
      'E_SHAPE',
      'microBatch',
    );
    expect(error.message).toContain('a replay of 16 rollouts of 3002 tokens at step 7');
    expect(error.message).toMatch(/needs about \d+\.\d\d GB of tensor memory/);
    expect(tf.memory().numTensors).toBe(tensors);
    [...model.parameters.values()].forEach((v, i) => {
      expect(v.dataSync()).toEqual(before[i]);
    });
    optimizer.dispose();
    model.dispose();
  });
});
