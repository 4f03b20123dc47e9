// Node-only (proper-lockfile, node:fs): used by `runSweep` of `@lethe/eval/node`.

import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LetheError } from '@lethe/core';
import { lock } from 'proper-lockfile';
import { removeLockOfDeadHolder, removeLockOwner, writeLockOwner } from './results-lock-owner';

/**
 * How long a lock whose holder stopped refreshing it counts as held: a run killed without a
 * chance to unlock (SIGKILL, a crash, a lost machine) on another machine frees its results file
 * after this long (one of this machine, at once). Long beside a cell's single blocking steps,
 * which delay the holder's refreshes.
 */
export const RESULTS_LOCK_STALE_MS = 60_000;

/** How often the holder refreshes its lock. */
const REFRESH_MS = 10_000;

/** A held results-file lock. */
export interface ResultsLock {
  /** Aborted (with an `E_STATE` error naming the file) when another process took the lock over. */
  readonly lost: AbortSignal;
  /** Frees the lock; resolves once its directory is gone. */
  release(): Promise<void>;
}

/**
 * Takes the lock of the results file at `path` (`<path>.lock`, a directory created atomically,
 * refreshed while held; `proper-lockfile`, which works on network file systems too), so that two
 * runs of one sweep never write one file: the second is refused instead of racing the first and
 * losing its cells. Missing parent directories are created. The holder's host and process id are
 * recorded beside the lock (`<path>.lock-owner`): a lock whose holder was a process of this
 * machine that is gone is taken over at once.
 *
 * @throws LetheError `E_STATE` naming `path` when another run holds it (a lock left by a run
 *   killed on another machine counts as held for {@link RESULTS_LOCK_STALE_MS}); `E_ARG` naming `path` when the lock
 *   cannot be made (no permission, a parent that is a file), with the system's reason.
 */
export async function lockResultsFile(path: string): Promise<ResultsLock> {
  const lost = new AbortController();
  let unlock: () => Promise<void>;
  try {
    await mkdir(dirname(path), { recursive: true });
    const take = () =>
      lock(path, {
        realpath: false,
        stale: RESULTS_LOCK_STALE_MS,
        update: REFRESH_MS,
        retries: 0,
        onCompromised: (error) =>
          lost.abort(
            new LetheError(
              'E_STATE',
              `lost its lock (${error.message}): another run may be writing it; stopped at this batch`,
              path,
            ),
          ),
      });
    unlock = await take().catch(async (error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOCKED' && (await removeLockOfDeadHolder(path))) return take();
      throw error;
    });
    await writeLockOwner(path).catch(async (error: unknown) => {
      await unlock();
      throw error;
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new LetheError(
        'E_STATE',
        `is being written by another run (its lock ${path}.lock is held); wait for that run or stop it — a lock left by a run killed on another machine frees itself within ${RESULTS_LOCK_STALE_MS / 1000} s`,
        path,
      );
    }
    throw new LetheError(
      'E_ARG',
      `cannot be locked: ${error instanceof Error ? error.message : String(error)}`,
      path,
    );
  }
  return {
    lost: lost.signal,
    release: async () => {
      if (lost.signal.aborted) return;
      await removeLockOwner(path);
      await unlock();
    },
  };
}
