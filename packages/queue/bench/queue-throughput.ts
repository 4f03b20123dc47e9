/**
 * Items per second and overhead per item of the Redis queue against the local thread pool, at 1,
 * 2 and 4 workers, on this machine:
 *
 *   node scripts/pnpm.mjs --filter @lethe/queue bench            (from the repository root)
 *   BENCH_RUNS=5 node scripts/pnpm.mjs --filter @lethe/queue bench
 *
 * Two kinds of item from the tests' fixture module: `empty` (returns at once: what moving an item
 * costs) and `busy` (a chain of square roots calibrated at the start to take 20 ms on one core:
 * how both scale with the cores there are). The local runner is a tinypool of n
 * threads running the module (what `WorkerPoolRollouts` and the sweep's pool use); the queue is
 * `runOnQueue` with n `startQueueWorker` processes of one thread each on a Redis server of its own
 * (Debian's redis-server on a loopback port). Every configuration runs BENCH_RUNS times (default
 * 3), interleaved; the table gives the median and the range. Overhead per item = (queue wall −
 * pool wall) / items at the same n. Needs `npm run build` first (the workers run the package's
 * build).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestRedis } from '@lethe/test-utils/redis';
import { Tinypool } from 'tinypool';
import { describeRequirements, runOnQueue } from '../src/node';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MODULE = new URL('../test/fixtures/square-item.mjs', import.meta.url);
const WORKER = fileURLToPath(new URL('../test/fixtures/worker-process.mjs', import.meta.url));
interface Workload {
  readonly name: string;
  readonly items: number;
  /** Square-root steps per item. */
  readonly work: number;
}

/** Square-root steps that take about `ms` on this core. */
function stepsFor(ms: number): number {
  let steps = 1 << 16;
  for (;;) {
    const started = performance.now();
    let x = 1;
    for (let i = 0; i < steps; i++) x = Math.sqrt(x + i);
    const took = performance.now() - started;
    if (took > 50 || x < 0) return Math.round((steps * ms) / took);
    steps *= 2;
  }
}

const WORKLOADS: readonly Workload[] = [
  { name: 'empty', items: 400, work: 0 },
  { name: 'busy 20 ms', items: 100, work: stepsFor(20) },
];
const WORKERS = [1, 2, 4];

async function timePool(threads: number, workload: Workload): Promise<number> {
  const pool = new Tinypool({ filename: MODULE.href, minThreads: threads, maxThreads: threads });
  await Promise.all(Array.from({ length: threads }, (_, i) => pool.run({ value: i })));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workload.items }, (_, i) => pool.run({ value: i, work: workload.work })),
  );
  const ms = performance.now() - started;
  await pool.destroy();
  return ms;
}

let runCount = 0;
async function timeQueue(redis: string, workload: Workload): Promise<number> {
  const requirements = await describeRequirements({
    root: '@lethe/queue',
    from: MODULE,
    files: [],
  });
  const started = performance.now();
  await runOnQueue(
    Array.from({ length: workload.items }, (_, i) => ({
      key: String(i),
      payload: { value: i, work: workload.work },
    })),
    () => undefined,
    {
      redis,
      kind: 'square',
      run: `bench${process.pid}x${runCount++}`,
      requirements,
    },
  );
  return performance.now() - started;
}

/** Starts `n` worker processes and waits until each has taken an item (so all are connected). */
async function startWorkers(redis: string, n: number): Promise<ChildProcess[]> {
  const workers = Array.from({ length: n }, () =>
    spawn(process.execPath, [WORKER, redis, '30000'], { stdio: 'ignore' }),
  );
  await timeQueue(redis, { name: 'empty', items: 4 * n, work: 0 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  return workers;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[], f: (x: number) => string): string =>
  `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

const redis = await startTestRedis();
console.log(`# @lethe/queue: queue vs local pool, ${RUNS} runs each (median (min–max))\n`);
console.log('| items | n | pool items/s | queue items/s | queue / pool | overhead per item (ms) |');
console.log('|---|--:|--:|--:|--:|--:|');
try {
  for (const workload of WORKLOADS) {
    for (const n of WORKERS) {
      const workers = await startWorkers(redis.url, n);
      const pool: number[] = [];
      const queue: number[] = [];
      try {
        for (let run = 0; run < RUNS; run++) {
          pool.push(await timePool(n, workload));
          queue.push(await timeQueue(redis.url, workload));
        }
      } finally {
        for (const worker of workers) worker.kill('SIGKILL');
      }
      const rate = (ms: number): number => (workload.items * 1000) / ms;
      const ratios = pool.map((p, i) => p / queue[i]!);
      const overheads = pool.map((p, i) => (queue[i]! - p) / workload.items);
      const whole = (x: number): string => x.toFixed(0);
      const two = (x: number): string => x.toFixed(2);
      console.log(
        `| ${workload.name} × ${workload.items} | ${n} | ${range(pool.map(rate), whole)} | ${range(queue.map(rate), whole)} | ${range(ratios, two)} | ${range(overheads, two)} |`,
      );
    }
  }
} finally {
  await redis.stop();
}
