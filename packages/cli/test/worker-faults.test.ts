import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SWEEP_CELL_KIND } from '@lethe/eval/node';
import { QUEUE_PREFIX, queueName } from '@lethe/queue';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, lethe, requireBuiltCli, timelessRows } from './run-lethe';

const models = (name: string): string =>
  fileURLToPath(new URL(`../../../models/${name}`, import.meta.url));
/** Debian's Redis client (redis-server depends on it): reads what the queue holds. */
const REDIS_CLI = '/usr/bin/redis-cli';

/** Six cells of about 1.5 s each on this machine: the full cache and H2O at five budgets. */
const sweep = (seed: number) => ({
  tasks: [
    { name: 'retrieval', options: { variant: 'niah-single', contextChars: 1024, valueDigits: 2 } },
  ],
  policies: ['full', 'h2o'],
  budgets: [0.5, 0.4, 0.3, 0.2, 0.15],
  seeds: [seed],
  examplesPerCell: 8,
  checkpoints: { retrieval: models('retrieval') },
});
const CELLS = 6;

interface WorkerProcess {
  readonly process: ChildProcess;
  /** The jobs this worker said it finished, `run-<run>-item-<i>`, in order. */
  readonly finished: string[];
}

/** Waits for `what` to hold, checking every 50 ms. */
async function until(what: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const skip = skipWithoutRedis('[@lethe/cli] lethe worker fault tests');

describe.skipIf(skip)('a sweep on lethe worker processes when a process dies', () => {
  let redis: TestRedis;
  let dir: string;
  const processes: ChildProcess[] = [];

  /** A `lethe worker` whose lock lapses 2 s after it dies. */
  const startWorker = (): WorkerProcess => {
    const child = spawn(
      process.execPath,
      [CLI, 'worker', '--redis', redis.url, '--lock-ms', '2000'],
      {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    processes.push(child);
    const finished: string[] = [];
    let partial = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const job = /^sweep-cell (run-[0-9a-f]+-item-\d+): [\d.]+ s$/.exec(line)?.[1];
        if (job !== undefined) finished.push(job);
      }
    });
    return { process: child, finished };
  };
  /** The ids of the sweep jobs a worker holds now. */
  const activeJobs = async (): Promise<string[]> => {
    const key = `${QUEUE_PREFIX}:${queueName(SWEEP_CELL_KIND)}:active`;
    const { stdout } = await promisify(execFile)(REDIS_CLI, [
      '-p',
      String(redis.port),
      'LRANGE',
      key,
      '0',
      '-1',
    ]);
    return stdout.split('\n').filter((line) => line !== '');
  };
  const itemsOf = (jobs: readonly string[], run: string): number[] =>
    jobs.flatMap((job) => (job.startsWith(`${run}-item-`) ? [Number(job.split('-').at(-1))] : []));
  const runOf = (job: string): string => job.replace(/-item-\d+$/, '');
  const killed = (child: ChildProcess): Promise<unknown> => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    return exited;
  };

  beforeAll(async () => {
    requireBuiltCli();
    redis = await startTestRedis();
    dir = await mkdtemp(join(tmpdir(), 'lethe-worker-faults-'));
    await writeFile(join(dir, 'worker-dies.json'), JSON.stringify(sweep(0)));
    await writeFile(join(dir, 'coordinator-dies.json'), JSON.stringify(sweep(1)));
  });

  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a worker killed mid-cell: the cell is computed by another, the table is one process’s', async () => {
    const local = await lethe(['eval', '--config', 'worker-dies.json'], dir);
    expect(local.status).toBe(0);
    const first = startWorker();
    const sweeping = lethe(['eval', '--config', 'worker-dies.json', '--redis', redis.url], dir);
    // Once it has finished a cell, kill the worker in the middle of a cell it has not finished.
    let held: string | undefined;
    await until(async () => {
      if (first.finished.length === 0) return false;
      const [job, ...others] = await activeJobs();
      if (job === undefined || others.length > 0 || first.finished.includes(job)) return false;
      held = job;
      return true;
    });
    await killed(first.process);
    const second = startWorker();
    const queued = await sweeping;
    expect(queued.status).toBe(0);
    expect(timelessRows(queued.stdout, 'retrieval')).toEqual(
      timelessRows(local.stdout, 'retrieval'),
    );
    const run = runOf(held!);
    const mine = itemsOf(first.finished, run);
    const theirs = itemsOf(second.finished, run);
    // The cell the dead worker held was computed by the other; every cell once between them.
    expect(theirs).toContain(Number(held!.split('-').at(-1)));
    expect(mine).not.toContain(Number(held!.split('-').at(-1)));
    expect([...mine, ...theirs].sort((a, b) => a - b)).toEqual([...Array(CELLS).keys()]);
    await killed(second.process);
  }, 300_000);

  it('a coordinator killed mid-sweep: run again, it collects what was finished and redoes nothing', async () => {
    const local = await lethe(['eval', '--config', 'coordinator-dies.json'], dir);
    expect(local.status).toBe(0);
    const workers = [startWorker(), startWorker()];
    const finished = () => workers.flatMap((worker) => worker.finished);
    const args = [
      CLI,
      'eval',
      '--config',
      'coordinator-dies.json',
      '--results',
      'results.json',
      '--redis',
      redis.url,
    ];
    const coordinator = spawn(process.execPath, args, { cwd: dir, stdio: 'ignore' });
    processes.push(coordinator);
    // Killed once it has recorded a cell: the rerun takes some cells from the file, the others from
    // the queue (finished meanwhile, or still to compute).
    const recorded = async () =>
      (JSON.parse(await readFile(join(dir, 'results.json'), 'utf8').catch(() => '{}')).cells
        ?.length ?? 0) as number;
    await until(async () => (await recorded()) >= 1);
    await killed(coordinator);
    expect(await recorded()).toBeLessThan(CELLS);
    const rerun = await lethe(args.slice(1), dir);
    expect(rerun.status).toBe(0);
    expect(timelessRows(rerun.stdout, 'retrieval')).toEqual(
      timelessRows(local.stdout, 'retrieval'),
    );
    const run = runOf(finished()[0]!);
    expect(finished().every((job) => runOf(job) === run)).toBe(true);
    // Each cell computed once, over both coordinators.
    expect(itemsOf(finished(), run).sort((a, b) => a - b)).toEqual([...Array(CELLS).keys()]);
  }, 300_000);
});
