import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultRegistry } from '@lethe/policies';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The pool's threads run dist/sweep-cell-worker.js, which it finds next to its own module: the
// pooled sweep is tested from the package's build.
import { runSweep as runBuiltSweep } from '../../dist/node.js';
import type { SweepProgress, SweepResults } from '../../src/harness/index';
import { runSweep } from '../../src/harness/node';
import { COMMITTED_SWEEP, timeless } from './committed-sweep';

let dir: string;
let inThread: SweepResults;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-sweep-pool-'));
  inThread = await runSweep(COMMITTED_SWEEP);
}, 300_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runSweep on a pool of threads', () => {
  it('gives the results of one thread, in sweep order, and reports every cell', async () => {
    const reports: SweepProgress[] = [];
    const pooled = await runBuiltSweep(COMMITTED_SWEEP, {
      threads: 2,
      onProgress: (progress) => reports.push(progress),
    });
    expect(pooled.cells.map((c) => c.key)).toEqual(inThread.cells.map((c) => c.key));
    expect(pooled.cells.map(timeless)).toEqual(inThread.cells.map(timeless));
    expect(reports.map((r) => r.index).sort((a, b) => a - b)).toEqual(
      inThread.cells.map((_, i) => i),
    );
    expect(reports.every((r) => !r.skipped && r.total === inThread.cells.length)).toBe(true);
    expect(reports.at(-1)!.etaMs).toBe(0);
  }, 300_000);

  it('resumes from a results file: finished cells are kept, the rest computed', async () => {
    const path = join(dir, 'resumed.json');
    const controller = new AbortController();
    let finished = 0;
    // Stopped once three cells are in the file.
    await expect(
      runBuiltSweep(COMMITTED_SWEEP, {
        threads: 2,
        resultsPath: path,
        signal: controller.signal,
        onProgress: () => {
          finished += 1;
          if (finished === 3) controller.abort(new Error('stop'));
        },
      }),
    ).rejects.toThrow('stop');
    const partial = JSON.parse(await readFile(path, 'utf8')) as SweepResults;
    expect(partial.cells.length).toBeGreaterThanOrEqual(3);
    expect(partial.cells.length).toBeLessThan(inThread.cells.length);

    const reports: SweepProgress[] = [];
    const resumed = await runBuiltSweep(COMMITTED_SWEEP, {
      threads: 2,
      resultsPath: path,
      onProgress: (progress) => reports.push(progress),
    });
    expect(reports.filter((r) => r.skipped).map((r) => r.key)).toEqual(
      partial.cells.map((c) => c.key),
    );
    expect(resumed.cells.map(timeless)).toEqual(inThread.cells.map(timeless));
    const file = JSON.parse(await readFile(path, 'utf8')) as SweepResults;
    expect(file.cells.map(timeless)).toEqual(inThread.cells.map(timeless));
  }, 300_000);

  it("stops at a cell's error, as a coded error naming what one thread names", async () => {
    const broken = {
      ...COMMITTED_SWEEP,
      checkpoints: { ...COMMITTED_SWEEP.checkpoints, lm: join(dir, 'none') },
    };
    const path = join(dir, 'broken.json');
    const alone = await runSweep(broken).catch((error: unknown) => error);
    const pooled = await runBuiltSweep(broken, { threads: 2, resultsPath: path }).catch(
      (error: unknown) => error,
    );
    expect(pooled).toMatchObject({
      code: (alone as { code: string }).code,
      argument: (alone as { argument: string }).argument,
      message: (alone as Error).message,
    });
    // The retrieval cells finished before the lm model was needed are kept.
    const file = JSON.parse(await readFile(path, 'utf8')) as SweepResults;
    expect(file.cells.every((c) => c.key.task === 'retrieval')).toBe(true);
  }, 300_000);

  it('refuses a thread count that is not an integer ≥ 1, and objects of this thread with a pool', async () => {
    await expectLetheRejection(runSweep(COMMITTED_SWEEP, { threads: 0 }), 'E_ARG', 'threads');
    await expectLetheRejection(runSweep(COMMITTED_SWEEP, { threads: 1.5 }), 'E_ARG', 'threads');
    await expectLetheRejection(
      runSweep(COMMITTED_SWEEP, { threads: 2, registry: createDefaultRegistry() }),
      'E_ARG',
      'threads',
    );
  });
});
