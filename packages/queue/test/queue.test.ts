import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LetheError } from '@lethe/core';
import { expectLetheRejection } from '@lethe/test-utils';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionOptions, jobIdOf, parseRedisUrl, QUEUE_PREFIX, queueName } from '../src/index';
import {
  collectOnQueue,
  describeRequirements,
  type QueueItem,
  type QueueWorkerHandle,
  runOnQueue,
  startQueueWorker,
} from '../src/node';

const SQUARE = new URL('./fixtures/square-item.mjs', import.meta.url);
const WORKER_PROCESS = fileURLToPath(new URL('./fixtures/worker-process.mjs', import.meta.url));

interface Square {
  readonly value: number;
  readonly sleepMs?: number;
  readonly log?: string;
}

const skip = skipWithoutRedis('[@lethe/queue] queue tests');

describe.skipIf(skip)('runOnQueue with startQueueWorker on a Redis server', () => {
  let redis: TestRedis;
  let dir: string;
  let run = 0;
  /** A run id of its own for each test. */
  const nextRun = (): string => `t${process.pid}x${run++}`;
  const requirementsOf = (files: string[] = []) =>
    describeRequirements({ root: '@lethe/queue', from: SQUARE, files });
  /**
   * A worker of this process. Every worker of a queue shares its stalled-job check, whose pace the
   * last to check sets: all use the same short lock, so a dead worker's item moves within ~1 s.
   */
  const worker = (
    threads = 1,
    onRefused?: (error: LetheError) => void,
    refusalDelayMs = 200,
  ): QueueWorkerHandle =>
    startQueueWorker({
      redis: redis.url,
      kinds: { square: SQUARE },
      threads,
      lockMs: 1000,
      stalledCheckMs: 300,
      refusalDelayMs,
      ...(onRefused === undefined ? {} : { onRefused }),
    });
  const items = (n: number, extra: Omit<Square, 'value'> = {}): QueueItem<Square>[] =>
    Array.from({ length: n }, (_, i) => ({ key: String(i), payload: { value: i, ...extra } }));
  const lines = async (path: string): Promise<string[]> =>
    (await readFile(path, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
  const until = async (what: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!(await what())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    dir = await mkdtemp(join(tmpdir(), 'lethe-queue-'));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('computes every item once, in any order, on two threads', async () => {
    const pool = worker(2);
    const results = new Map<number, number>();
    try {
      await runOnQueue<Square, { square: number }>(
        items(24, { sleepMs: 5 }),
        (index, result) => {
          expect(results.has(index)).toBe(false);
          results.set(index, result.square);
        },
        {
          redis: redis.url,
          kind: 'square',
          run: nextRun(),
          requirements: await requirementsOf(),
        },
      );
    } finally {
      await pool.close();
    }
    expect([...results].sort(([a], [b]) => a - b)).toEqual(
      Array.from({ length: 24 }, (_, i) => [i, i * i]),
    );
  });

  it('collectOnQueue resolves with every result in item order', async () => {
    const pool = worker(2);
    try {
      const squares = await collectOnQueue<Square, { square: number }>(
        items(6, { sleepMs: 5 }).reverse(),
        {
          redis: redis.url,
          kind: 'square',
          run: nextRun(),
          requirements: await requirementsOf(),
        },
      );
      expect(squares.map((result) => result.square)).toEqual([25, 16, 9, 4, 1, 0]);
    } finally {
      await pool.close();
    }
  });

  it('a rerun takes what an earlier coordinator left, computing nothing twice', async () => {
    const log = join(dir, 'rerun.log');
    const runId = nextRun();
    const options = {
      redis: redis.url,
      kind: 'square',
      run: runId,
      requirements: await requirementsOf(),
    };
    const taker = worker();
    const first = new Map<number, number>();
    const stop = new AbortController();
    const work = items(8, { sleepMs: 40, log });
    try {
      const stopped = runOnQueue<Square, { square: number }>(
        work,
        (index, result) => {
          first.set(index, result.square);
          if (first.size === 2) stop.abort(new Error('coordinator stopped'));
        },
        { ...options, signal: stop.signal },
      );
      await expect(stopped).rejects.toThrow('coordinator stopped');
      // The worker goes on with the run's jobs while no coordinator waits.
      await until(async () => (await lines(log)).filter((l) => l.startsWith('end')).length === 8);
      const second = new Map<number, number>();
      await runOnQueue<Square, { square: number }>(
        work.filter((item) => !first.has(item.payload.value)),
        (index, result) => void second.set(index, result.square),
        options,
      );
      expect(second.size).toBe(8 - first.size);
    } finally {
      await taker.close();
    }
    // Every item started and ended exactly once.
    const log8 = await lines(log);
    expect(log8.filter((l) => l.startsWith('start')).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `start ${i}`).sort(),
    );
    expect(log8.length).toBe(16);
  });

  it('an item whose worker is killed mid-item is retried elsewhere and counted once', async () => {
    const log = join(dir, 'killed.log');
    const killed = spawnWorker(redis.url, 1000);
    let rescuer: QueueWorkerHandle | undefined;
    const results: number[] = [];
    try {
      const running = runOnQueue<Square, { square: number }>(
        [{ key: 'slow', payload: { value: 7, sleepMs: 1500, log } }],
        (_index, result) => void results.push(result.square),
        {
          redis: redis.url,
          kind: 'square',
          run: nextRun(),
          requirements: await requirementsOf(),
        },
      );
      await until(async () => (await lines(log)).includes('start 7'));
      killed.kill('SIGKILL');
      rescuer = worker();
      await running;
    } finally {
      killed.kill('SIGKILL');
      await rescuer?.close();
    }
    expect(results).toEqual([49]);
    expect(await lines(log)).toEqual(['start 7', 'start 7', 'end 7']);
  }, 30_000);

  it('a worker whose files or packages differ refuses the run, leaving its items to others', async () => {
    const model = join(dir, 'model');
    await writeFile(model, 'weights A');
    const requirements = await requirementsOf([model]);
    const runId = nextRun();
    const results: number[] = [];
    const heard: string[] = [];
    const running = runOnQueue<Square, { square: number }>(
      [{ key: 'one', payload: { value: 3 } }],
      (_index, result) => void results.push(result.square),
      {
        redis: redis.url,
        kind: 'square',
        run: runId,
        requirements,
        reconcileMs: 100,
        onRefused: (message) => void heard.push(message),
      },
    );
    await writeFile(model, 'weights B');
    const refusals: LetheError[] = [];
    // Its refusal holds the item back 3 s: long enough to see it delayed, untried.
    const refusing = worker(1, (error) => refusals.push(error), 3000);
    await until(async () => refusals.length === 1 && heard.length === 1);
    expect(refusals[0]).toMatchObject({ code: 'E_QUEUE', argument: 'requirements' });
    expect(refusals[0]!.message).toContain(`${model}: other contents here`);
    expect(heard[0]).toBe(refusals[0]!.message);
    const queue = new Queue(queueName('square'), {
      connection: connectionOptions(parseRedisUrl(redis.url)),
      prefix: QUEUE_PREFIX,
    });
    const job = await queue.getJob(jobIdOf(runId, 'one'));
    expect(await job?.getState()).toBe('delayed');
    expect(job?.attemptsMade).toBe(0);
    await queue.close();
    // The refusing worker never takes the run again; one whose file matches computes it.
    await writeFile(model, 'weights A');
    const matching = worker();
    await running;
    await Promise.all([matching.close(), refusing.close()]);
    expect(results).toEqual([9]);
    expect(refusals).toHaveLength(1);

    const other = {
      ...requirements,
      packages: { ...requirements.packages, '@lethe/core': '9.9.9' },
    };
    const stop = new AbortController();
    const running2 = runOnQueue<Square, unknown>(
      [{ key: 'two', payload: { value: 2 } }],
      () => undefined,
      {
        redis: redis.url,
        kind: 'square-other',
        run: nextRun(),
        requirements: other,
        signal: stop.signal,
      },
    );
    const refusals2: LetheError[] = [];
    const refusing2 = startQueueWorker({
      redis: redis.url,
      kinds: { 'square-other': SQUARE },
      onRefused: (error) => refusals2.push(error),
    });
    await until(async () => refusals2.length === 1);
    expect(refusals2[0]!.message).toContain('@lethe/core: 0.1.0 here, 9.9.9 in the run');
    stop.abort(new Error('no worker takes this run'));
    await expect(running2).rejects.toThrow('no worker takes this run');
    await refusing2.close();
  });

  it('goes on when Redis restarts empty, adding the lost items again', async () => {
    const taker = worker();
    const results = new Map<number, number>();
    let requeued = 0;
    try {
      await runOnQueue<Square, { square: number }>(
        items(10, { sleepMs: 100 }),
        async (index, result) => {
          expect(results.has(index)).toBe(false);
          results.set(index, result.square);
          if (results.size === 3) {
            await redis.stop();
            await redis.start();
          }
        },
        {
          redis: redis.url,
          kind: 'square',
          run: nextRun(),
          requirements: await requirementsOf(),
          reconcileMs: 200,
          onRequeued: (count) => {
            requeued += count;
          },
        },
      );
    } finally {
      await taker.close();
    }
    expect(results.size).toBe(10);
    for (const [index, square] of results) expect(square).toBe(index * index);
    expect(requeued).toBeGreaterThan(0);
  }, 60_000);

  it('stops with a clear error when Redis does not come back', async () => {
    const running = runOnQueue<Square, unknown>(items(2, { sleepMs: 10 }), () => undefined, {
      redis: redis.url,
      kind: 'square',
      run: nextRun(),
      requirements: await requirementsOf(),
      reconcileMs: 100,
      redisTimeoutMs: 1000,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await redis.stop();
    try {
      const error = await expectLetheRejection(running, 'E_QUEUE', 'redis');
      expect(error.message).toContain(
        `no answer from Redis at redis://127.0.0.1:${redis.port}/0 for 1000 ms`,
      );
    } finally {
      await redis.start();
    }
  }, 30_000);
});

/** A worker in a process of its own. */
function spawnWorker(redis: string, lockMs: number): ChildProcess {
  return spawn(process.execPath, [WORKER_PROCESS, redis, String(lockMs)], { stdio: 'ignore' });
}
