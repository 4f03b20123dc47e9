import type { DecoderModel } from '@lethe/model';
import { AdamW, initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectRollouts } from '../../src/train/collect-rollouts';
import { learnerUpdate } from '../../src/train/learner-update';
import { lossGradients } from '../../src/train/loss-gradients';
import type { NgcRollout } from '../../src/train/rollout';
import { sharpModel, TINY_CONFIG } from './fixtures';

const config = { ...TINY_CONFIG, vocab_size: 11 };
const scoring = { temperature: 1, logits: { kind: 'log', temperature: 1 } } as const;
const advantages = Float32Array.of(0.75, -0.25, -0.25, -0.25);

let model: DecoderModel;
let rollouts: NgcRollout[];

beforeAll(async () => {
  await initBackend('wasm');
  model = sharpModel(config, 5);
  rollouts = await collectRollouts(
    [0, 1, 2, 3].map((stream) => ({
      prompt: Int32Array.of(1, 4, 5, 6, 7),
      stream,
      evictionRate: 0.5,
    })),
    {
      model,
      ngc: { cadence: 6, blockSize: 2, window: 3, logits: scoring.logits },
      maxNewTokens: 20,
      temperature: 1,
      stop: {},
      seed: 3,
    },
  );
}, 60_000);

afterAll(() => model.dispose());

describe('lossGradients', () => {
  it("splits the learner's gradient: the parts add up to the update's norm, nothing leaks", async () => {
    expect(rollouts.every((r) => r.rounds.length > 0)).toBe(true);
    const before = tf.memory().numTensors;
    const split = lossGradients(model, rollouts, advantages, { ...scoring, microBatch: 3 });
    expect(tf.memory().numTensors).toBe(before);
    expect(split.tokenNorm).toBeGreaterThan(0);
    expect(split.memoryNorm).toBeGreaterThan(0);
    expect(Math.abs(split.cosine)).toBeLessThanOrEqual(1);
    // The learner's own gradient of L_token + L_mem (lr 0: the weights stay), a second path.
    const optimizer = new AdamW(model.parameters, { weightDecay: 0 });
    const update = await learnerUpdate(model, optimizer, rollouts, advantages, {
      ...scoring,
      variant: 'ngc',
      microBatch: 2,
      clipNorm: 1e9,
      lr: 0,
      step: 1,
    });
    optimizer.dispose();
    expect(split.totalNorm).toBeCloseTo(update.gradNorm, 4);
    // The same without the eviction term: token-only's gradient is the token part alone.
    const second = new AdamW(model.parameters, { weightDecay: 0 });
    const tokenOnly = await learnerUpdate(model, second, rollouts, advantages, {
      ...scoring,
      variant: 'token-only',
      microBatch: 4,
      clipNorm: 1e9,
      lr: 0,
      step: 1,
    });
    second.dispose();
    expect(split.tokenNorm).toBeCloseTo(tokenOnly.gradNorm, 4);
  });
});
