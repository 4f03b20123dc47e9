import { fileURLToPath } from 'node:url';
import { KVCache } from '@lethe/kv-cache';
import { CharTokenizer, DecoderModel, generate } from '@lethe/model';
import { loadCheckpoint } from '@lethe/model/node';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NgcPolicy } from '../../src/ngc-policy';
import { collectRollouts } from '../../src/train/collect-rollouts';
import { type ReplayBatch, replayBatch } from '../../src/train/replay-batch';
import { type ReplayLogProbs, replayLogProbs } from '../../src/train/replay-forward';
import { evictedAtFromRounds } from '../../src/train/replay-visibility';
import { type NgcRollout, replayLength } from '../../src/train/rollout';

const COUNTDOWN = fileURLToPath(new URL('../../../../models/countdown', import.meta.url));
const ALPHABET = '0123456789+-*/=() ;:\n.abegmnrstuw';
const ngc = {
  cadence: 12,
  blockSize: 4,
  window: 3,
  logits: { kind: 'log', temperature: 1 },
} as const;

let model: DecoderModel;
let tokenizer: CharTokenizer;
let rollouts: NgcRollout[];

beforeAll(async () => {
  await initBackend('wasm');
  const checkpoint = await loadCheckpoint(COUNTDOWN);
  model = DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
  tokenizer = new CharTokenizer(ALPHABET);
  const prompts = ['numbers: 3 7 12\ntarget: 33\n', 'numbers: 20 4 9\ntarget: 45\n'].map((text) =>
    tokenizer.encode(text, { addBos: true }),
  );
  rollouts = await collectRollouts(
    prompts.flatMap((prompt, p) =>
      [0, 1].map((g) => ({ prompt, stream: 2 * p + g, evictionRate: p === 0 ? 0.5 : 0.75 })),
    ),
    {
      model,
      ngc,
      maxNewTokens: 60,
      temperature: 0.9,
      stop: { eosTokenIds: [tokenizer.eosId], stopSequences: [tokenizer.encode('.')] },
      seed: 7,
    },
  );
}, 60_000);

afterAll(() => model.dispose());

/** Replays every rollout: NGC's replay (masks and rounds) or a plain causal one. */
function replayAll(masked: boolean): { batch: ReplayBatch; replay: ReplayLogProbs } {
  const batch = replayBatch(rollouts, {
    layers: model.config.num_hidden_layers,
    replayMasks: masked,
    scoreRounds: masked,
  });
  return { batch, replay: replayLogProbs(model, batch, { temperature: 0.9, logits: ngc.logits }) };
}

/** Largest |replayed − rollout| token log-prob over every generated token. */
function worstTokenDifference(replayed: tf.Tensor2D): number {
  const tokens = replayed.arraySync();
  let worst = 0;
  rollouts.forEach((rollout, b) => {
    const first = rollout.prompt.length - 1;
    rollout.tokenLogProbs.forEach((logProb, k) => {
      worst = Math.max(worst, Math.abs(tokens[b]![first + k]! - logProb));
    });
  });
  return worst;
}

describe('replay masks (§4.5, App. A.3)', () => {
  it('rollouts ran eviction rounds in every layer', () => {
    for (const rollout of rollouts) {
      for (let layer = 0; layer < model.config.num_hidden_layers; layer++) {
        expect(rollout.rounds.some((round) => round.layer === layer)).toBe(true);
      }
      expect(rollout.peakEntries).toBeLessThan(
        replayLength(rollout) * model.config.num_hidden_layers * model.config.num_key_value_heads,
      );
    }
  });

  it('rebuilds from the recorded rounds exactly the visibility the cache traced', async () => {
    const prompt = tokenizer.encode('numbers: 5 6 8\ntarget: 38\n', { addBos: true });
    const rounds: { layer: number; step: number; positions: Int32Array; order: Int32Array }[] = [];
    const result = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: 50,
      sampling: { temperature: 0.9 },
      seed: 3,
      eviction: new NgcPolicy({ ...ngc, evictionRate: 0.5, mode: 'sample' }),
      onEvictionRound: ({ layer, step, observation, decision }) => {
        rounds.push({
          layer,
          step,
          positions: observation.positions.slice(0, observation.liveCounts[0]),
          order: (decision as unknown as { order: Int32Array }).order.slice(),
        });
      },
    });
    const cache = result.caches[0];
    // Replay masks are KVCache's own (not the KVCacheStore contract); generate() makes KVCaches.
    if (!(cache instanceof KVCache)) throw new Error('expected the default KVCache');
    for (let layer = 0; layer < model.config.num_hidden_layers; layer++) {
      const length = cache.length(layer);
      const mine = rounds
        .filter((r) => r.layer === layer)
        .map((r) => ({ ...r, window: ngc.window, blockSize: ngc.blockSize, logProb: 0 }));
      const evictedAt = evictedAtFromRounds(length, mine);
      const expected = cache.replayMask(layer);
      const rebuilt = new Uint8Array(length * length);
      for (let j = 0; j < length; j++) {
        for (let i = j; i < Math.min(evictedAt[j]!, length); i++) rebuilt[i * length + j] = 1;
      }
      expect(rebuilt).toEqual(expected);
    }
  });

  it('one parallel forward reproduces every rollout token log-prob (max |Δ| < 1e-4)', () => {
    const before = tf.memory().numTensors;
    const { replay } = replayAll(true);
    const worst = worstTokenDifference(replay.tokens);
    expect(worst).toBeLessThan(1e-4);
    tf.dispose([replay.tokens, replay.rounds]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('recomputes every round log-prob of eq. 2 from the replay attention', () => {
    const { batch, replay } = replayAll(true);
    const rounds = replay.rounds.arraySync();
    const flat = rollouts.flatMap((r) => r.rounds);
    let worst = 0;
    rollouts.forEach((rollout, b) => {
      // Slots hold layer 0's rounds first, then layer 1's, each in the order they ran.
      const ordered = [...rollout.rounds].sort((x, y) => x.layer - y.layer);
      ordered.forEach((round, slot) => {
        worst = Math.max(
          worst,
          Math.abs(rounds[b]![slot]! - round.logProb) / Math.max(1, Math.abs(round.logProb)),
        );
      });
      for (let slot = ordered.length; slot < batch.roundsPerRollout; slot++) {
        expect(rounds[b]![slot]).toBe(0);
      }
    });
    expect(flat.length).toBeGreaterThan(0);
    expect(worst).toBeLessThan(1e-4);
    tf.dispose([replay.tokens, replay.rounds]);
  });

  it('without replay masks the causal replay sees evicted entries and the log-probs differ', () => {
    const { replay } = replayAll(false);
    const worst = worstTokenDifference(replay.tokens);
    expect(worst).toBeGreaterThan(1e-2);
    tf.dispose([replay.tokens, replay.rounds]);
  });
});
