import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { LetheError } from '@lethe/core';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  InProcessRollouts,
  type PolicySnapshot,
  packSnapshot,
  RolloutError,
  type RolloutFunction,
} from '../src/index';
import { WorkerPoolRollouts } from '../src/node';

// The pool's threads run test/fixtures/seeded-rollout.mjs, which imports this package's build
// (`pnpm --filter @lethe/rl-grpo build`, which turbo runs before the tests).
const FIXTURE = new URL('./fixtures/seeded-rollout.mjs', import.meta.url);
const NO_DEFAULT = new URL('./fixtures/no-default.mjs', import.meta.url);

interface Request {
  readonly seed: number;
  readonly fail?: boolean;
}
interface Result {
  readonly seed: number;
  readonly version: number;
  readonly value: number;
}

const REQUESTS: Request[] = [11, 12, 13, 14, 15].map((seed) => ({ seed }));
let rollout: RolloutFunction<Request, Result>;
let snapshots: PolicySnapshot[];

async function snapshotOf(scale: number, version: number): Promise<PolicySnapshot> {
  const [w, b] = tf.tidy(() => [
    tf.mul(tf.tensor2d([1, -2, 3, 0.5, 0.25, -4], [2, 3]), scale),
    tf.mul(tf.tensor1d([0.125, -1]), scale),
  ]);
  const snapshot = await packSnapshot(
    new Map([
      ['w', w!],
      ['b', b!],
    ]),
    version,
  );
  tf.dispose([w!, b!]);
  return snapshot;
}

beforeAll(async () => {
  await initBackend('wasm');
  rollout = (await import(FIXTURE.href)).default;
  snapshots = [await snapshotOf(1, 0), await snapshotOf(-0.5, 1)];
});

async function runAll(
  runner: InProcessRollouts<Request, Result> | WorkerPoolRollouts<Request, Result>,
): Promise<Result[][]> {
  try {
    const out: Result[][] = [];
    for (const snapshot of snapshots) out.push(await runner.run(REQUESTS, snapshot));
    return out;
  } finally {
    await runner.close();
  }
}

describe('rollout runners', () => {
  let inProcess: Result[][];

  beforeAll(async () => {
    inProcess = await runAll(new InProcessRollouts(rollout));
  });

  it('run in process in request order, one result per request and snapshot', () => {
    expect(inProcess.map((results) => results.map((r) => [r.seed, r.version]))).toEqual(
      snapshots.map((s) => REQUESTS.map((r) => [r.seed, s.version])),
    );
    // Different seeds and different weights give different values.
    expect(new Set(inProcess.flat().map((r) => r.value)).size).toBe(10);
  });

  it.each([1, 2, 3])(
    'give the in-process results exactly on %i worker thread(s)',
    async (threads) => {
      const pool = new WorkerPoolRollouts<Request, Result>(FIXTURE, { threads });
      expect(pool.threads).toBe(threads);
      expect(await runAll(pool)).toEqual(inProcess);
    },
  );

  it('keep weights across tasks in each thread, reloading on a new version only', async () => {
    const pool = new WorkerPoolRollouts<Request, Result>(fileURLToPath(FIXTURE), { threads: 1 });
    try {
      await pool.run(REQUESTS, snapshots[0]!);
      // Other weights under the old version: the thread's cache keeps what it loaded.
      const sameVersion = { ...snapshots[1]!, version: snapshots[0]!.version };
      expect(await pool.run(REQUESTS, sameVersion)).toEqual(inProcess[0]);
      expect(await pool.run(REQUESTS, snapshots[1]!)).toEqual(inProcess[1]);
    } finally {
      await pool.close();
    }
  });

  it('return nothing for no requests', async () => {
    const pool = new WorkerPoolRollouts<Request, Result>(FIXTURE, { threads: 2 });
    const local = new InProcessRollouts(rollout);
    expect(await pool.run([], snapshots[0]!)).toEqual([]);
    expect(await local.run([], snapshots[0]!)).toEqual([]);
    await pool.close();
  });

  it('do not leak tensors in process', async () => {
    const local = new InProcessRollouts(rollout);
    await local.run(REQUESTS, snapshots[0]!); // the fixture's cache now holds version 0
    const before = tf.memory().numTensors;
    await local.run(REQUESTS, snapshots[0]!);
    await local.run(REQUESTS, snapshots[1]!);
    expect(tf.memory().numTensors).toBe(before);
    await local.close();
  });
});

describe('rollout runner errors', () => {
  const failing = REQUESTS.map((r, i) => (i === 3 ? { ...r, fail: true } : r));

  async function rolloutError(run: Promise<unknown>): Promise<RolloutError> {
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RolloutError);
    return error as RolloutError;
  }

  it('a throwing rollout reaches the caller with the request index, in process and in a pool', async () => {
    const local = new InProcessRollouts(rollout);
    const pool = new WorkerPoolRollouts<Request, Result>(FIXTURE, { threads: 2 });
    try {
      for (const runner of [local, pool]) {
        const error = await rolloutError(runner.run(failing, snapshots[0]!));
        expect(error.index).toBe(3);
        expect(error.message).toBe('requests[3]: request with seed 14 failed');
        expect((error.cause as Error).message).toBe('request with seed 14 failed');
      }
      // The pool is still usable after a failed task.
      expect(await pool.run(REQUESTS, snapshots[0]!)).toEqual(
        await local.run(REQUESTS, snapshots[0]!),
      );
    } finally {
      await Promise.all([local.close(), pool.close()]);
    }
  });

  it('a request that cannot be sent to a worker names its chunk', async () => {
    const pool = new WorkerPoolRollouts<unknown, Result>(FIXTURE, { threads: 2 });
    try {
      const error = await rolloutError(
        pool.run([{ seed: 1 }, { seed: 2 }, { seed: 3 }, () => 4], snapshots[0]!),
      );
      expect(error.index).toBe(2);
      expect(error.message).toMatch(/^requests\[2…3\]: /);
    } finally {
      await pool.close();
    }
  });

  it('bad options and worker modules are LetheErrors naming the argument', async () => {
    for (const threads of [0, -1, 1.5, Number.NaN]) {
      expect(() => new WorkerPoolRollouts(FIXTURE, { threads })).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'threads' }),
      );
    }
    for (const worker of [
      '',
      '   ',
      'test/fixtures/missing.mjs',
      new URL('https://example.org/w.mjs'),
    ]) {
      expect(() => new WorkerPoolRollouts(worker, { threads: 1 })).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'worker' }),
      );
    }
    expect(
      () => new InProcessRollouts(undefined as unknown as RolloutFunction<Request, Result>),
    ).toThrowError(expect.objectContaining({ code: 'E_ARG', argument: 'rollout' }));
    const pool = new WorkerPoolRollouts(NO_DEFAULT, { threads: 1 });
    try {
      await expect(pool.run(REQUESTS, snapshots[0]!)).rejects.toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'worker' }),
      );
    } finally {
      await pool.close();
    }
  });

  it('a closed runner cannot run (E_STATE), and closing twice is harmless', async () => {
    const pool = new WorkerPoolRollouts<Request, Result>(FIXTURE, { threads: 1 });
    const local = new InProcessRollouts(rollout);
    for (const runner of [pool, local]) {
      await runner.close();
      await runner.close();
      const error = await runner.run(REQUESTS, snapshots[0]!).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LetheError);
      expect((error as LetheError).code).toBe('E_STATE');
    }
  });

  it('default to one thread fewer than the machine has, at least one', async () => {
    const pool = new WorkerPoolRollouts(FIXTURE);
    expect(pool.threads).toBe(Math.max(1, availableParallelism() - 1));
    await pool.close();
  });
});
