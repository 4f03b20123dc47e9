import { type CheckpointStore, DecoderModel, resizeVocabulary } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectRolloutsOptions, collectRollouts } from '../../src/train/collect-rollouts';
import { NgcTrainer, type NgcTrainerOptions } from '../../src/train/ngc-trainer';
import { replayBatch } from '../../src/train/replay-batch';
import { replayLogProbs } from '../../src/train/replay-forward';
import type { NgcRollout } from '../../src/train/rollout';
import { TINY_CONFIG, TINY_NGC, TOY_TASK, toyTrainerOptions } from './fixtures';

/** The meta-token g: the one id `resizeVocabulary` adds to the tiny model. */
const META = TINY_CONFIG.vocab_size;
const temperature = 0.9;
let model: DecoderModel;
let rollouts: NgcRollout[];

const settings = (): CollectRolloutsOptions => ({
  model,
  ngc: TINY_NGC,
  maxNewTokens: 28,
  temperature,
  stop: {},
  seed: 7,
  metaToken: META,
});

beforeAll(async () => {
  await initBackend('wasm');
  const base = DecoderModel.random(TINY_CONFIG, 3);
  model = resizeVocabulary(base, META + 1);
  base.dispose();
  const prompts = [Int32Array.of(1, 4, 5), Int32Array.of(1, 6, 2, 7, 3, 8, 4, 5)];
  rollouts = await collectRollouts(
    prompts.flatMap((prompt, p) =>
      [0.5, 0.75, 0].map((evictionRate, g) => ({ prompt, stream: 3 * p + g, evictionRate })),
    ),
    settings(),
  );
}, 60_000);

afterAll(() => model.dispose());

/** Layer 0's rounds after the prompt, as indices of the generated token appended just before. */
function beforeRounds(rollout: NgcRollout): number[] {
  const P = rollout.prompt.length;
  return rollout.rounds
    .filter((round) => round.layer === 0 && round.step > P)
    .map((round) => round.step - 1 - P);
}

describe('rollouts with a meta-token (App. A.4)', () => {
  it('emit the meta-token right before every round, with a finite log-prob', () => {
    for (const rollout of rollouts) {
      if (rollout.evictionRate === 0) {
        expect(rollout.rounds).toHaveLength(0);
        continue;
      }
      const indices = beforeRounds(rollout);
      expect(indices.length).toBeGreaterThanOrEqual(3);
      for (const i of indices) {
        expect(rollout.tokens[i]).toBe(META);
        expect(Number.isFinite(rollout.tokenLogProbs[i]!)).toBe(true);
      }
    }
  });

  it('replay to the recorded token log-probs (max |Δ| < 1e-4) and round log-probs', () => {
    const before = tf.memory().numTensors;
    const batch = replayBatch(rollouts, {
      layers: model.config.num_hidden_layers,
      replayMasks: true,
      scoreRounds: true,
    });
    const replay = replayLogProbs(model, batch, { temperature, logits: TINY_NGC.logits });
    const tokens = replay.tokens.arraySync();
    const rounds = replay.rounds.arraySync();
    let worstToken = 0;
    let worstMeta = 0;
    let worstRound = 0;
    rollouts.forEach((rollout, b) => {
      const first = rollout.prompt.length - 1;
      const metaAt = new Set(rollout.evictionRate === 0 ? [] : beforeRounds(rollout));
      rollout.tokenLogProbs.forEach((logProb, k) => {
        const difference = Math.abs(tokens[b]![first + k]! - logProb);
        worstToken = Math.max(worstToken, difference);
        if (metaAt.has(k)) worstMeta = Math.max(worstMeta, difference);
      });
      [...rollout.rounds]
        .sort((x, y) => x.layer - y.layer)
        .forEach((round, slot) => {
          worstRound = Math.max(
            worstRound,
            Math.abs(rounds[b]![slot]! - round.logProb) / Math.max(1, Math.abs(round.logProb)),
          );
        });
    });
    expect(worstToken).toBeLessThan(1e-4);
    expect(worstMeta).toBeLessThan(1e-4);
    expect(worstRound).toBeLessThan(1e-4);
    tf.dispose([replay.tokens, replay.rounds]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('reject a meta-token outside the vocabulary, naming metaToken', async () => {
    for (const metaToken of [META + 1, -1, 0.5]) {
      await expect(
        collectRollouts([{ prompt: Int32Array.of(1, 2), stream: 0, evictionRate: 0.5 }], {
          ...settings(),
          metaToken,
        }),
      ).rejects.toMatchObject({ code: 'E_ARG', argument: 'metaToken' });
    }
  });
});

describe('NgcTrainer with a meta-token', () => {
  const options = (
    overrides: Partial<NgcTrainerOptions<Int32Array>> = {},
  ): NgcTrainerOptions<Int32Array> =>
    toyTrainerOptions(model, {
      steps: 1,
      groupSize: 2,
      curriculum: { retention: [0.5], stageSteps: 1, blend: 0.6 },
      metaToken: META,
      ...overrides,
    });

  /** One training step on a copy of the model; the history without wall times. */
  async function trainOnce(
    overrides: (copy: DecoderModel) => Partial<NgcTrainerOptions<Int32Array>>,
  ): Promise<unknown[]> {
    const copy = resizeVocabulary(model, META + 1);
    const trainer = new NgcTrainer(options({ model: copy, ...overrides(copy) }));
    const { history } = await trainer.train();
    trainer.dispose();
    copy.dispose();
    return history.map((metrics) => ({ ...metrics, seconds: 0 }));
  }

  it('passes it to its in-process rollouts', async () => {
    const metaTokens: number[] = [];
    const explicit = await trainOnce((copy) => ({
      rollouts: async (requests) => {
        const out = await collectRollouts(requests, {
          model: copy,
          ngc: TINY_NGC,
          maxNewTokens: 16,
          temperature: 1,
          stop: TOY_TASK.stop,
          seed: 5,
          metaToken: META,
        });
        for (const rollout of out) metaTokens.push(...beforeRounds(rollout));
        return out;
      },
    }));
    expect(metaTokens.length).toBeGreaterThan(0);
    expect(await trainOnce(() => ({}))).toEqual(explicit);
    expect(await trainOnce(() => ({ metaToken: undefined }))).not.toEqual(explicit);
  }, 60_000);

  it('records it in the checkpoint configuration and checks it', async () => {
    expect(() => new NgcTrainer(options({ metaToken: META + 1 }))).toThrow(
      expect.objectContaining({ code: 'E_ARG', argument: 'metaToken' }),
    );
    const copy = resizeVocabulary(model, META + 1);
    const store = memoryStore();
    const trainer = new NgcTrainer(
      options({ model: copy, metaToken: undefined, checkpoint: store }),
    );
    await trainer.train();
    trainer.dispose();
    const withMeta = new NgcTrainer(options({ model: copy, checkpoint: store }));
    await expect(withMeta.train()).rejects.toMatchObject({ code: 'E_CHECKPOINT' });
    withMeta.dispose();
    copy.dispose();
  }, 60_000);
});

function memoryStore(): CheckpointStore {
  let saved: Uint8Array | undefined;
  return {
    read: async () => saved,
    write: async (bytes: Uint8Array) => {
      saved = bytes.slice();
    },
  };
}
