import { type CheckpointStore, DecoderModel, decodeTrainingCheckpoint } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectRollouts } from '../../src/train/collect-rollouts';
import {
  NGC_CHECKPOINT_FORMAT,
  NGC_CHECKPOINT_VERSION,
  NgcTrainer,
  type NgcTrainerOptions,
} from '../../src/train/ngc-trainer';
import type { NgcRollout } from '../../src/train/rollout';
import { TINY_CONFIG, TOY_TASK as task, toyTrainerOptions } from './fixtures';

const config = TINY_CONFIG;

function memoryStore(): CheckpointStore & { bytes: Uint8Array | undefined; writes: number } {
  const store = {
    bytes: undefined as Uint8Array | undefined,
    writes: 0,
    read: async () => store.bytes,
    write: async (bytes: Uint8Array) => {
      store.bytes = bytes.slice();
      store.writes++;
    },
  };
  return store;
}

const options = toyTrainerOptions;

async function parameters(model: DecoderModel): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [name, variable] of model.parameters) out[name] = [...(await variable.data())];
  return out;
}

beforeAll(async () => {
  await initBackend('wasm');
});

describe('NgcTrainer', () => {
  it('trains, reports finite metrics on the curriculum, and does not leak tensors', async () => {
    const model = DecoderModel.random(config, 1);
    const before = tf.memory().numTensors;
    const seen: number[] = [];
    const trainer = new NgcTrainer(options(model, { onProgress: (p) => seen.push(p.step) }));
    const result = await trainer.train();
    trainer.dispose();
    expect(seen).toEqual([1, 2, 3]);
    // eq. 6 with Δ = 2, α = 0.6: step 1 is half-way through stage 0, 1/6 into its blend.
    expect(result.history.map((m) => m.evictionRate)).toEqual([0, expect.closeTo(1 / 12, 9), 0.5]);
    for (const m of result.history) {
      for (const value of [m.loss, m.gradNorm, m.reward, m.accuracy, m.peakEntries]) {
        expect(Number.isFinite(value)).toBe(true);
      }
    }
    // Step 1 runs without eviction: no rounds and no eviction loss.
    expect(result.history[0]!.rounds).toBe(0);
    expect(result.history[2]!.rounds).toBeGreaterThan(0);
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  }, 120_000);

  it('resumes from a checkpoint bit-identically', async () => {
    const straight = DecoderModel.random(config, 1);
    const a = new NgcTrainer(options(straight));
    const full = await a.train();
    a.dispose();

    const resumed = DecoderModel.random(config, 1);
    const store = memoryStore();
    const controller = new AbortController();
    const b = new NgcTrainer(
      options(resumed, {
        checkpoint: store,
        onProgress: (p) => {
          if (p.step === 2) controller.abort();
        },
        signal: controller.signal,
      }),
    );
    const first = await b.train();
    b.dispose();
    expect(first).toMatchObject({ step: 2, stopped: true });

    const fresh = DecoderModel.random(config, 1);
    const c = new NgcTrainer(options(fresh, { checkpoint: store }));
    const rest = await c.train();
    c.dispose();
    expect(rest.resumedFrom).toBe(2);
    expect(rest.history).toEqual(
      full.history.map((m, i) => ({ ...m, seconds: rest.history[i]!.seconds })),
    );
    expect(await parameters(fresh)).toEqual(await parameters(straight));
    for (const model of [straight, resumed, fresh]) model.dispose();
  }, 120_000);

  it('refuses a checkpoint of another configuration', async () => {
    const model = DecoderModel.random(config, 1);
    const store = memoryStore();
    const a = new NgcTrainer(options(model, { steps: 1, checkpoint: store }));
    await a.train();
    a.dispose();
    const b = new NgcTrainer(options(model, { steps: 1, checkpoint: store, lr: 2e-2 }));
    await expect(b.train()).rejects.toMatchObject({ code: 'E_CHECKPOINT' });
    b.dispose();
    model.dispose();
  }, 60_000);

  it('stops on a non-finite loss with the step number and keeps the last good checkpoint', async () => {
    const model = DecoderModel.random(config, 1);
    const store = memoryStore();
    let saved: NgcRollout[] = [];
    const trainer = new NgcTrainer(
      options(model, {
        checkpoint: store,
        checkpointEvery: 1,
        // Rollouts of step 1 are replayed at every step, so poisoning the weights after step 2
        // reaches the loss, not the sampler.
        rollouts: async (requests, step) => {
          if (step === 0) {
            saved = await collectRollouts(requests, {
              model,
              ngc: options(model).ngc,
              maxNewTokens: 16,
              temperature: 1,
              stop: task.stop,
              seed: 5,
            });
          }
          return saved;
        },
        onProgress: (p) => {
          if (p.step === 2) {
            const variable = model.parameters.get('model.layers.0.self_attn.q_proj.weight')!;
            tf.tidy(() => variable.assign(tf.fill(variable.shape, Number.NaN)));
          }
        },
      }),
    );
    await expect(trainer.train()).rejects.toMatchObject({
      code: 'E_STATE',
      message: expect.stringContaining('step 3'),
    });
    trainer.dispose();
    expect(store.writes).toBe(2);
    const kept = decodeTrainingCheckpoint(store.bytes!, {
      format: NGC_CHECKPOINT_FORMAT,
      version: NGC_CHECKPOINT_VERSION,
    });
    expect(kept.step).toBe(2);
    model.dispose();
  }, 60_000);

  it('rejects non-finite rewards and bad options, naming them', async () => {
    const model = DecoderModel.random(config, 1);
    const bad = new NgcTrainer(
      options(model, { steps: 1, task: { ...task, reward: () => Number.NaN } }),
    );
    await expect(bad.train()).rejects.toMatchObject({ code: 'E_ARG', argument: 'rewards[0]' });
    bad.dispose();
    const cases: [Partial<NgcTrainerOptions<Int32Array>>, string][] = [
      [{ steps: 0 }, 'steps'],
      [{ groupSize: 1 }, 'groupSize'],
      [{ microBatch: 0 }, 'microBatch'],
      [{ variant: 'other' as never }, 'variant'],
      [{ clipNorm: 0 }, 'clipNorm'],
      [{ temperature: 0 }, 'temperature'],
      [
        { curriculum: { retention: [0.5, 0.9], stageSteps: 1, blend: 0.6 } },
        'curriculum.retention[1]',
      ],
      [{ ngc: { ...options(model).ngc, cadence: 0 } }, 'ngc.cadence'],
    ];
    for (const [override, argument] of cases) {
      expect(() => new NgcTrainer(options(model, override))).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument }),
      );
    }
    model.dispose();
  }, 60_000);
});
