import { DecoderModel } from '@lethe/model';
import { packSnapshot, RolloutError } from '@lethe/rl-grpo';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
// The pool's threads run dist/train-rollout-worker.js, which it finds next to its own module:
// the pool and the worker come from this package's build (turbo builds before the tests).
import { workerPoolRollouts } from '../../dist/train-node.js';
import rolloutWorker from '../../dist/train-rollout-worker.js';
import { collectRollouts } from '../../src/train/collect-rollouts';
import { type NgcStepMetrics, NgcTrainer } from '../../src/train/ngc-trainer';
import {
  changeWeights,
  ROLLOUT_REQUESTS,
  ROLLOUT_SETTINGS,
  rolloutTrainerOptions,
  TINY_CONFIG,
} from './fixtures';

const config = TINY_CONFIG;
const settings = ROLLOUT_SETTINGS;
const requests = ROLLOUT_REQUESTS;

beforeAll(async () => {
  await initBackend('wasm');
});

describe('workerPoolRollouts', () => {
  it.each([1, 2])(
    'returns exactly the in-process rollouts on %i thread(s), and new weights at the next step',
    async (threads) => {
      const model = DecoderModel.random(config, 3);
      const pool = workerPoolRollouts(model, settings, { threads });
      try {
        const before = await collectRollouts(requests, { ...settings, model });
        expect(before.some((r) => r.rounds.length > 0)).toBe(true);
        const tensors = tf.memory().numTensors;
        expect(await pool(requests, 0)).toEqual(before);
        expect(tf.memory().numTensors).toBe(tensors); // nothing left behind in this thread

        changeWeights(model);
        const after = await collectRollouts(requests, { ...settings, model });
        expect(after).not.toEqual(before);
        expect(await pool(requests, 1)).toEqual(after);

        await pool.close();
        await expect(pool(requests, 2)).rejects.toMatchObject({ code: 'E_STATE' });
      } finally {
        await pool.close();
        model.dispose();
      }
    },
  );

  it('names the first request of the job that failed', async () => {
    const model = DecoderModel.random(config, 3);
    const pool = workerPoolRollouts(model, settings, { threads: 2 });
    try {
      const bad = requests.map((r, i) => (i === 4 ? { ...r, evictionRate: 2 } : r));
      const error = await pool(bad, 0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RolloutError);
      expect((error as RolloutError).index).toBe(3);
      expect((error as RolloutError).message).toMatch(/^requests\[3…5\]: .*evictionRate/);
    } finally {
      await pool.close();
      model.dispose();
    }
  });

  it('rejects a bad thread count naming threads', () => {
    const model = DecoderModel.random(config, 3);
    for (const threads of [0, 1.5]) {
      expectLetheError(() => workerPoolRollouts(model, settings, { threads }), 'E_ARG', 'threads');
    }
    model.dispose();
  });

  it('drives an NgcTrainer exactly as in-process rollouts do', async () => {
    const histories: Omit<NgcStepMetrics, 'seconds'>[][] = [];
    for (const threads of [0, 2]) {
      const model = DecoderModel.random(config, 4);
      const pool = threads === 0 ? undefined : workerPoolRollouts(model, settings, { threads });
      const trainer = new NgcTrainer({ ...rolloutTrainerOptions(model), rollouts: pool });
      try {
        const { history } = await trainer.train();
        histories.push(history.map(({ seconds: _, ...metrics }) => metrics));
      } finally {
        await pool?.close();
        trainer.dispose();
        model.dispose();
      }
    }
    expect(histories[0]!.map((m) => m.evictionRate)).toEqual([0, 0.5]);
    expect(histories[1]).toEqual(histories[0]);
  });
});

describe('the rollout worker', () => {
  it('builds the model once per snapshot version and disposes the one it replaces', async () => {
    const model = DecoderModel.random(config, 3);
    const job = { config: model.config, settings, requests };
    const run = async (version: number) =>
      rolloutWorker({ request: job, snapshot: await packSnapshot(model.parameters, version) });
    try {
      const before = await collectRollouts(requests, { ...settings, model });
      expect(await run(0)).toEqual(before);
      const held = tf.memory().numTensors; // this model and the worker's copy
      changeWeights(model);
      expect(await run(0)).toEqual(before); // same version: the cached weights
      expect(tf.memory().numTensors).toBe(held);
      expect(await run(1)).toEqual(await collectRollouts(requests, { ...settings, model }));
      expect(tf.memory().numTensors).toBe(held);
    } finally {
      model.dispose();
    }
  });
});
