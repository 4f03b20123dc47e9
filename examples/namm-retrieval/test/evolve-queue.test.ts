import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NAMM_MEMBER_KIND, nammMemberWorkerModule } from '@lethe/policies-namm/train/node';
import { startQueueWorker } from '@lethe/queue/node';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EvolveSettings, evolveRun } from '../src/evolve-run';
import { smallRun } from './small-run';

const dirs: string[] = [];
const outDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'namm-evolve-queue-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const settings = (out: string): EvolveSettings => smallRun(out, 2, 3);

describe.skipIf(skipWithoutRedis('[namm-retrieval] evolve --redis test'))(
  'evolveRun with --redis',
  () => {
    it('evolves as in this thread, its generations computed by a queue worker', async () => {
      const local = await evolveRun(settings(outDir()));
      const redis = await startTestRedis();
      const worker = startQueueWorker({
        redis: redis.url,
        kinds: { [NAMM_MEMBER_KIND]: nammMemberWorkerModule() },
        threads: 2,
      });
      try {
        const queued = await evolveRun({ ...settings(outDir()), redis: redis.url });
        const timeless = (records: typeof local) =>
          records.map((record) => ({ ...record, seconds: 0 }));
        expect(timeless(queued)).toEqual(timeless(local));
        await expect(
          evolveRun({ ...settings(outDir()), redis: redis.url, threads: 2 }),
        ).rejects.toMatchObject({ code: 'E_ARG', argument: 'threads' });
      } finally {
        await worker.close();
        await redis.stop();
      }
    }, 300_000);
  },
);
