// Node-only: the cells of a sweep on a Redis job queue (`runSweep` with `redis`), computed by
// `lethe worker` processes on any machine that reads the same files.
import { readFile } from 'node:fs/promises';
import { policyModelDirectory } from '@lethe/policies';
import { describeRequirements, runIdOf, runOnQueue } from '@lethe/queue/node';
import { activeBackend } from '@lethe/tensor';
import { errorOf } from './cell-failure';
import { policyParts } from './policy-spec';
import type { SweepCellJob, SweepCellOutcome } from './sweep-cell-worker';
import type { SweepConfig } from './sweep-config';
import { labelledCheckpoints } from './sweep-context';
import type { PendingCell } from './sweep-pool';
import type { SweepRecord } from './sweep-record';

/** The kind of item a sweep's cells are on the queue (`lethe-sweep-cell`). */
export const SWEEP_CELL_KIND = 'sweep-cell';

/** The module a worker runs a sweep cell with: `dist/sweep-cell-worker.js` beside this build. */
export function sweepCellWorkerModule(): URL {
  return new URL('./sweep-cell-worker.js', import.meta.url);
}

/** How a sweep uses the queue. */
export interface SweepQueueOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /** Hears each refusal a worker wrote (its packages or files differ from this run's). */
  readonly onRefused?: (message: string) => void;
}

/**
 * Computes `pending` as jobs on the queue `lethe-sweep-cell`, one cell a job carrying the sweep,
 * the cell's key and the tfjs backend, and the run's requirements: the versions of `@lethe/eval`
 * and the Lethe and tfjs packages under it, and the content hashes of every checkpoint and
 * policy directory the sweep reads (and of the models its policy manifests name). The run's id
 * hashes the sweep, the backend and those requirements, so a rerun of the same sweep takes over
 * the jobs a killed coordinator left. A cell's result depends only on its key and the sweep, so
 * the results are those of one thread (but the wall times); each is added to `record` as it
 * arrives.
 *
 * @throws the first failed cell's error (a `LetheError` again when it was one); the errors of
 *   `runOnQueue` (`E_QUEUE` when Redis does not answer or a job failed on every try).
 */
export async function runCellsOnQueue(
  sweep: SweepConfig,
  pending: readonly PendingCell[],
  record: SweepRecord,
  queue: SweepQueueOptions,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  if (pending.length === 0) return;
  const backend = activeBackend() ?? 'wasm';
  const requirements = await describeRequirements({
    root: '@lethe/eval',
    from: sweepCellWorkerModule(),
    files: await sweepFiles(sweep),
  });
  const run = runIdOf({ sweep, backend, requirements });
  await runOnQueue<SweepCellJob, SweepCellOutcome>(
    pending.map(({ index, key }) => ({
      key: String(index),
      payload: { config: sweep, key, backend },
    })),
    async (i, outcome) => {
      if ('failure' in outcome) throw errorOf(outcome.failure);
      await record.add(pending[i]!.index, outcome.result);
    },
    {
      redis: queue.redis,
      kind: SWEEP_CELL_KIND,
      run,
      requirements,
      ...(signal === undefined ? {} : { signal }),
      ...(queue.onRefused === undefined ? {} : { onRefused: queue.onRefused }),
    },
  );
}

/**
 * Every file or directory a sweep's cells read: its checkpoints, its policies' directories (and
 * their parts'), and the model each policy manifest names.
 */
async function sweepFiles(sweep: SweepConfig): Promise<string[]> {
  const dirs = new Set(Object.values(labelledCheckpoints(sweep)));
  const policyDirs = sweep.policies.flatMap((policy) =>
    policyParts(policy).flatMap((part) => (part.dir === null ? [] : [part.dir])),
  );
  for (const dir of policyDirs) {
    dirs.add(dir);
    const manifest = await readFile(`${dir}/policy.json`, 'utf8').then(
      (text) => JSON.parse(text) as { model?: unknown },
      () => undefined,
    );
    if (typeof manifest?.model === 'string') dirs.add(policyModelDirectory(dir, manifest.model));
  }
  return [...dirs];
}
