import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SOL_ROLLOUTS_KIND, solRolloutsWorkerModule } from '@lethe/policies-sol/train/node';
import { startQueueWorker } from '@lethe/queue/node';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SolRunSettings } from '../src/run-settings';
import { trainSol } from '../src/train-run';

const MODEL = join(__dirname, '../../../models/lm');
const root = mkdtempSync(join(tmpdir(), 'sol-lm-queue-'));
const SETTINGS: SolRunSettings = {
  model: MODEL,
  actions: '2L',
  horizon: 4,
  prefix: { min: 8, max: 16 },
  batchSize: 3,
  groupSize: 2,
  updates: 2,
  lr: 1e-3,
  penaltyWeights: [100, 100, 200],
  width: 8,
  seed: 1,
};

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(skipWithoutRedis('[sol-lm] train --redis test'))('trainSol with --redis', () => {
  it('trains the controller of a run in this thread, its schedules run by a queue worker', async () => {
    await trainSol(join(root, 'local'), SETTINGS);
    const redis = await startTestRedis();
    const items: string[] = [];
    const worker = startQueueWorker({
      redis: redis.url,
      kinds: { [SOL_ROLLOUTS_KIND]: solRolloutsWorkerModule() },
      threads: 2,
      onItem: ({ kind }) => void items.push(kind),
    });
    try {
      const queued = await trainSol(join(root, 'queued'), SETTINGS, { redis: redis.url });
      expect(queued.stopped).toBe(false);
      // Two updates of three inputs, one input an item.
      expect(items).toEqual(Array(6).fill(SOL_ROLLOUTS_KIND));
    } finally {
      await worker.close();
      await redis.stop();
    }
    const controller = (run: string) =>
      readFileSync(join(root, run, 'policy', 'controller.safetensors'));
    expect(Buffer.compare(controller('queued'), controller('local'))).toBe(0);
  }, 300_000);
});
