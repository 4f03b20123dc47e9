import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DecoderModel } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Workers run dist/train-queue-rollout-worker.js: the rollouts come from this package's build.
import { queueRollouts } from '../../dist/train-node.js';
import { collectRollouts } from '../../src/train/collect-rollouts';
import { type NgcStepMetrics, NgcTrainer } from '../../src/train/ngc-trainer';
import {
  changeWeights,
  ROLLOUT_REQUESTS,
  ROLLOUT_SETTINGS,
  rolloutTrainerOptions,
  TINY_CONFIG,
} from './fixtures';

const WORKER = fileURLToPath(new URL('./fixtures-queue/rollout-worker.mjs', import.meta.url));

describe.skipIf(skipWithoutRedis('[@lethe/policies-ngc] queue rollout tests'))(
  'queueRollouts with worker processes',
  () => {
    let redis: TestRedis;
    let dir: string;
    const workers: ChildProcess[] = [];

    beforeAll(async () => {
      await initBackend('wasm');
      redis = await startTestRedis();
      dir = await mkdtemp(join(tmpdir(), 'lethe-ngc-queue-'));
      for (let i = 0; i < 2; i++) {
        workers.push(spawn(process.execPath, [WORKER, redis.url], { stdio: 'inherit' }));
      }
    });
    afterAll(async () => {
      for (const worker of workers) worker.kill('SIGKILL');
      await redis?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('returns exactly the in-process rollouts, and the new weights at the next step', async () => {
      const model = DecoderModel.random(TINY_CONFIG, 3);
      const weightsDir = join(dir, 'weights');
      const rollouts = queueRollouts(model, ROLLOUT_SETTINGS, {
        redis: redis.url,
        weightsDir,
        requestsPerItem: 4,
      });
      try {
        const before = await collectRollouts(ROLLOUT_REQUESTS, { ...ROLLOUT_SETTINGS, model });
        expect(before.some((r) => r.rounds.length > 0)).toBe(true);
        expect(await rollouts(ROLLOUT_REQUESTS, 0)).toEqual(before);
        const [first] = await readdir(weightsDir);
        expect(first).toMatch(/^ngc-weights-[0-9a-f]{24}\.safetensors$/);

        changeWeights(model);
        const after = await collectRollouts(ROLLOUT_REQUESTS, { ...ROLLOUT_SETTINGS, model });
        expect(after).not.toEqual(before);
        expect(await rollouts(ROLLOUT_REQUESTS, 1)).toEqual(after);
        // One weights file: the previous update's was removed.
        const files = await readdir(weightsDir);
        expect(files).toHaveLength(1);
        expect(existsSync(join(weightsDir, first!))).toBe(false);
      } finally {
        model.dispose();
      }
    }, 120_000);

    it('drives an NgcTrainer exactly as in-process rollouts do', async () => {
      const histories: Omit<NgcStepMetrics, 'seconds'>[][] = [];
      for (const queued of [false, true]) {
        const model = DecoderModel.random(TINY_CONFIG, 4);
        const rollouts = queued
          ? queueRollouts(model, ROLLOUT_SETTINGS, {
              redis: redis.url,
              weightsDir: join(dir, 'trainer'),
            })
          : undefined;
        const trainer = new NgcTrainer({ ...rolloutTrainerOptions(model), rollouts });
        try {
          const { history } = await trainer.train();
          histories.push(history.map(({ seconds: _, ...metrics }) => metrics));
        } finally {
          trainer.dispose();
          model.dispose();
        }
      }
      expect(histories[0]!.map((m) => m.evictionRate)).toEqual([0, 0.5]);
      expect(histories[1]).toEqual(histories[0]);
    }, 120_000);
  },
);
