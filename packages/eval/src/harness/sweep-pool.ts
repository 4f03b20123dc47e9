// Node-only: the cells of a sweep on a pool of worker threads (`runSweep` with `threads` > 1).
import { setMaxListeners } from 'node:events';
import { activeBackend } from '@lethe/tensor';
import { Tinypool } from 'tinypool';
import { errorOf } from './cell-failure';
import type { CellKey } from './results';
import type { SweepCellJob, SweepCellOutcome } from './sweep-cell-worker';
import type { SweepConfig } from './sweep-config';
import type { SweepRecord } from './sweep-record';

/** A cell still to compute and its index in the sweep order. */
export interface PendingCell {
  readonly index: number;
  readonly key: CellKey;
}

/**
 * Computes `pending` on `threads` worker threads, each running `dist/sweep-cell-worker.js` (so
 * this works from the package's build, not from its TypeScript sources). Cells are handed out in
 * sweep order, the next to the first thread that is free; each thread loads a task's model and runs its
 * full-cache references once, then keeps them for its later cells. A cell's result depends only
 * on its key and the sweep, so the results are those of one thread (but the wall times).
 * Every result is added to `record` as it arrives.
 *
 * The first failure (or `signal`) stops the pool: cells still running are abandoned, and this
 * rejects with the cell's error (a `LetheError` again when it was one) or `signal.reason`.
 */
export async function runCellsOnPool(
  sweep: SweepConfig,
  pending: readonly PendingCell[],
  record: SweepRecord,
  threads: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  if (pending.length === 0) return;
  const lanes = Math.min(threads, pending.length);
  const pool = new Tinypool({
    filename: new URL('./sweep-cell-worker.js', import.meta.url).href,
    minThreads: lanes,
    maxThreads: lanes,
  });
  const stop = new AbortController();
  setMaxListeners(lanes + 1, stop.signal);
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    failure ??= { error };
    stop.abort();
  };
  const onAbort = (): void => fail(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const backend = activeBackend() ?? 'wasm';
  let next = 0;
  // One lane per thread: each hands its thread the next cell in sweep order until none is left.
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < pending.length) {
      const { index, key } = pending[next++]!;
      const job: SweepCellJob = { config: sweep, key, backend };
      let outcome: SweepCellOutcome;
      try {
        outcome = await pool.run(job, { signal: stop.signal });
      } catch (error) {
        if (!stop.signal.aborted) fail(error);
        return;
      }
      if ('failure' in outcome) return fail(errorOf(outcome.failure));
      if (failure === undefined) await record.add(index, outcome.result).catch(fail);
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await pool.destroy();
  }
  if (failure !== undefined) throw failure.error;
}
