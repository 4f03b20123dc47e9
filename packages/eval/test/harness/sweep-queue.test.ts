import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Workers run dist/sweep-cell-worker.js: the queued sweep is tested from the package's build.
import { runSweep as runBuiltSweep } from '../../dist/node.js';
import type { SweepResults } from '../../src/harness/index';
import { runSweep } from '../../src/harness/node';
import { COMMITTED_SWEEP, timeless } from './committed-sweep';

const WORKER = fileURLToPath(new URL('./fixtures/sweep-worker.mjs', import.meta.url));

const skip = skipWithoutRedis('[@lethe/eval] queued sweep tests');

describe.skipIf(skip)('runSweep on a Redis queue with worker processes', () => {
  let redis: TestRedis;
  let dir: string;
  let inThread: SweepResults;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    await initBackend('wasm');
    redis = await startTestRedis();
    dir = await mkdtemp(join(tmpdir(), 'lethe-sweep-queue-'));
    for (let i = 0; i < 2; i++) {
      workers.push(spawn(process.execPath, [WORKER, redis.url], { stdio: 'inherit' }));
    }
    inThread = await runSweep(COMMITTED_SWEEP);
  }, 300_000);

  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the results of one thread, in sweep order, and a resumable results file', async () => {
    const path = join(dir, 'queued.json');
    const stop = new AbortController();
    let finished = 0;
    const stopped = runBuiltSweep(COMMITTED_SWEEP, {
      queue: { redis: redis.url },
      resultsPath: path,
      signal: stop.signal,
      onProgress: () => {
        finished += 1;
        if (finished === 3) stop.abort(new Error('stopped'));
      },
    });
    await expect(stopped).rejects.toThrow('stopped');
    const partial = JSON.parse(await readFile(path, 'utf8')) as SweepResults;
    expect(partial.cells.length).toBeGreaterThanOrEqual(3);
    const queued = await runBuiltSweep(COMMITTED_SWEEP, {
      queue: { redis: redis.url },
      resultsPath: path,
    });
    expect(queued.cells.map((c) => c.key)).toEqual(inThread.cells.map((c) => c.key));
    expect(queued.cells.map(timeless)).toEqual(inThread.cells.map(timeless));
  }, 300_000);

  it('refuses options its workers cannot take', async () => {
    await expectLetheRejection(
      runBuiltSweep(COMMITTED_SWEEP, { queue: { redis: redis.url }, threads: 2 }),
      'E_ARG',
      'threads',
    );
    await expectLetheRejection(
      runBuiltSweep(COMMITTED_SWEEP, { queue: { redis: redis.url }, now: () => 0 }),
      'E_ARG',
      'queue',
    );
    await expectLetheRejection(
      runBuiltSweep(COMMITTED_SWEEP, { queue: { redis: 'http://x' } }),
      'E_ARG',
      'redis',
    );
  });
});
