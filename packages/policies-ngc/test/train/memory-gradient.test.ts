import type { DecoderModel } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectRollouts } from '../../src/train/collect-rollouts';
import { ngcLoss } from '../../src/train/ngc-loss';
import { type ReplayBatch, replayBatch } from '../../src/train/replay-batch';
import { replayLogProbs } from '../../src/train/replay-forward';
import { sharpModel, TINY_CONFIG } from './fixtures';

const config = { ...TINY_CONFIG, vocab_size: 11 };
const logits = { kind: 'log', temperature: 1 } as const;

let model: DecoderModel;
let batch: ReplayBatch;

/** L_mem alone (eq. 4) with every advantage 1, as the trainer computes it (PPO surrogate, ρ = 1). */
function memoryLoss(): tf.Scalar {
  return tf.tidy(() => {
    const replay = replayLogProbs(model, batch, { temperature: 1, logits });
    return ngcLoss(replay, batch, new Float32Array(batch.size).fill(1), batch.size).memory;
  });
}

/**
 * Eq. 4 written out, −(1/B) Σ_i Σ_r w_r log π(σ_r): its value moves with the weights (the
 * on-policy surrogate's value is constant), and its gradient is the one the surrogate must have.
 */
function memoryObjective(): number {
  return tf.tidy(() => {
    const { rounds } = replayLogProbs(model, batch, { temperature: 1, logits });
    const weights = tf.tensor2d(batch.roundWeights, [batch.size, batch.roundsPerRollout]);
    return -tf.sum(tf.mul(rounds, weights)).dataSync()[0]! / batch.size;
  });
}

beforeAll(async () => {
  await initBackend('wasm');
  model = sharpModel(config, 5);
  const prompts = [Int32Array.of(1, 4, 5, 6, 7), Int32Array.of(1, 8, 9)];
  const rollouts = await collectRollouts(
    prompts.map((prompt, i) => ({ prompt, stream: i, evictionRate: 0.5 })),
    {
      model,
      ngc: { cadence: 6, blockSize: 2, window: 3, logits },
      maxNewTokens: 20,
      temperature: 1,
      stop: {},
      seed: 11,
    },
  );
  batch = replayBatch(rollouts, { layers: 2, replayMasks: true, scoreRounds: true });
}, 60_000);

afterAll(() => model.dispose());

describe('L_mem gradient (§4.5, Fig. 9)', () => {
  it('reaches the queries and keys of every layer, and nothing downstream of the last scores', () => {
    const names = [...model.parameters.keys()];
    const { value, grads } = tf.variableGrads(memoryLoss, [...model.parameters.values()]);
    const norm = (name: string): number => {
      const variable = model.parameters.get(name)!;
      const grad = grads[variable.name];
      return grad === undefined || grad === null ? 0 : tf.norm(grad).dataSync()[0]!;
    };
    for (const layer of [0, 1]) {
      for (const proj of ['q_proj', 'k_proj']) {
        expect(norm(`model.layers.${layer}.self_attn.${proj}.weight`)).toBeGreaterThan(1e-4);
      }
    }
    // The last layer's scores depend on its Q and K only: its values, output projection, MLP,
    // the final norm and the LM head cannot move them.
    for (const name of names.filter(
      (n) =>
        /layers\.1\.(self_attn\.(v_proj|o_proj)|mlp|post_attention)/.test(n) ||
        n === 'model.norm.weight',
    )) {
      expect(norm(name)).toBe(0);
    }
    tf.dispose([value, ...Object.values(grads)]);
  });

  it('equals central finite differences of eq. 4 on the largest Q/K coordinates', () => {
    const probed = [
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.1.self_attn.k_proj.weight',
    ];
    const { value, grads } = tf.variableGrads(memoryLoss, [...model.parameters.values()]);
    for (const name of probed) {
      const variable = model.parameters.get(name)!;
      const grad = grads[variable.name]!.dataSync();
      const order = Array.from(grad.keys()).sort((a, b) => Math.abs(grad[b]!) - Math.abs(grad[a]!));
      const original = variable.dataSync().slice();
      for (const i of order.slice(0, 4)) {
        const at = (delta: number): number => {
          const moved = original.slice();
          moved[i]! += delta;
          tf.tidy(() => variable.assign(tf.tensor(moved, variable.shape)));
          return memoryObjective();
        };
        const h = 1e-2;
        const numeric = (at(h) - at(-h)) / (2 * h);
        tf.tidy(() => variable.assign(tf.tensor(original, variable.shape)));
        expect(Math.abs(numeric - grad[i]!)).toBeLessThan(2e-2 * Math.abs(grad[i]!) + 1e-3);
      }
    }
    tf.dispose([value, ...Object.values(grads)]);
  });
});
