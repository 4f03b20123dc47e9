import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, lethe, requireBuiltCli, timelessRows } from './run-lethe';

const models = (name: string): string =>
  fileURLToPath(new URL(`../../../models/${name}`, import.meta.url));

const skip = skipWithoutRedis('[@lethe/cli] lethe worker tests');

describe.skipIf(skip)('lethe worker and lethe eval --redis', () => {
  let redis: TestRedis;
  let dir: string;
  const workers: { process: ChildProcess; stderr: string[] }[] = [];

  beforeAll(async () => {
    requireBuiltCli();
    redis = await startTestRedis();
    dir = await mkdtemp(join(tmpdir(), 'lethe-worker-'));
    for (let i = 0; i < 2; i++) {
      const child = spawn(
        process.execPath,
        [CLI, 'worker', '--redis', redis.url, '--lock-ms', '5000'],
        {
          cwd: dir,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      const stderr: string[] = [];
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
      workers.push({ process: child, stderr });
    }
  });

  afterAll(async () => {
    for (const worker of workers) worker.process.kill('SIGKILL');
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('computes a sweep on two worker processes with the table of one process', async () => {
    const config = {
      tasks: [
        {
          name: 'retrieval',
          options: { variant: 'niah-single', contextChars: 256, valueDigits: 2 },
        },
      ],
      policies: ['full', 'h2o', 'snapkv'],
      budgets: [0.5, 0.25],
      seeds: [0],
      examplesPerCell: 4,
      checkpoints: { retrieval: models('retrieval') },
    };
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(config));
    const local = await lethe(['eval', '--config', 'sweep.json'], dir);
    expect(local.status).toBe(0);
    const queued = await lethe(['eval', '--config', 'sweep.json', '--redis', redis.url], dir);
    expect(queued.stderr).not.toContain('warning');
    expect(queued.status).toBe(0);
    // The same table but the throughput column.
    const rows = timelessRows(queued.stdout, 'retrieval');
    expect(rows).toEqual(timelessRows(local.stdout, 'retrieval'));
    expect(rows).toHaveLength(5);
    // Each worker said what it took; between them, every cell.
    const said = workers.map((worker) => worker.stderr.join(''));
    for (const text of said)
      expect(text).toContain(
        `taking sweep-cell, namm-member, ngc-rollouts, sol-rollouts items from ${redis.url}`,
      );
    expect(said.join('').match(/^sweep-cell run-[0-9a-f]+-item-\d+: [\d.]+ s$/gm)).toHaveLength(5);
  }, 300_000);

  it('names the flag of a bad Redis URL', async () => {
    const worker = await lethe(['worker', '--redis', 'localhost:6379'], dir);
    expect(worker.status).toBe(2);
    expect(worker.stderr).toContain(
      '[E_ARG] --redis (redis): must be a redis:// or rediss:// URL, got localhost:',
    );
    const sweep = await lethe(['eval', '--config', 'sweep.json', '--redis', 'http://x'], dir);
    expect(sweep.status).toBe(2);
    expect(sweep.stderr).toMatch(/\[E_ARG\] --redis \(redis\): must be a redis:\/\//);
  });
});
