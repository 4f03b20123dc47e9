import type { DecoderModel } from '@lethe/model';
import { chunkStarts, packSnapshot, RolloutError } from '@lethe/rl-grpo';
import { WorkerPoolRollouts } from '@lethe/rl-grpo/node';
import type { CollectRolloutsOptions, RolloutRequest } from './collect-rollouts';
import type { RolloutFunction } from './group-batch';
import type { NgcRollout } from './rollout';
import type { NgcRolloutJob } from './rollout-job';

/** Options of {@link workerPoolRollouts}. */
export interface NgcWorkerPoolOptions {
  /** Worker threads (integer ≥ 1). Default `os.availableParallelism() − 1`, at least 1. */
  readonly threads?: number;
}

/**
 * A {@link RolloutFunction} that generates on a pool of Node worker threads instead of this one
 * (pass it as `NgcTrainer`'s `rollouts`; `close()` it when done). Each call packs `model`'s
 * current weights into a snapshot whose version is the call's `step`, splits the requests into
 * one contiguous job per thread — each job is one `collectRollouts` call, so every thread
 * decodes its share as one batch per eviction rate — and returns the rollouts in request order.
 * A rollout's draws depend only on its stream id and the seed, so the result equals
 * `collectRollouts(requests, { ...settings, model })` in this thread, whatever the thread count.
 *
 * Each thread (wasm backend) keeps the model it built from the last snapshot and rebuilds it only
 * when the version changes: the weights must change only between calls with different steps (as
 * in a trainer, one step per update), and one pool serves one model.
 *
 * The threads run `dist/train-rollout-worker.js` next to this module's build, so this works from
 * the package's build (ESM or CJS), not from its TypeScript sources.
 *
 * @param model the learner's model; read (never changed) at every call.
 * @param settings what `collectRollouts` needs besides the model; plain data (it is cloned to
 *   the threads).
 * @throws LetheError `E_ARG` naming `threads` when it is not an integer ≥ 1. A call rejects with
 *   `E_STATE` after `close()`, or with a `RolloutError` whose `index` is the first request of the
 *   job that failed (e.g. an invalid setting or eviction rate).
 * @example
 * ```ts
 * const rollouts = workerPoolRollouts(model, { ngc, maxNewTokens, temperature, stop, seed }, { threads: 2 });
 * const trainer = new NgcTrainer({ model, ngc, maxNewTokens, temperature, seed, rollouts, … });
 * try { await trainer.train(); } finally { await rollouts.close(); }
 * ```
 */
export function workerPoolRollouts(
  model: DecoderModel,
  settings: Omit<CollectRolloutsOptions, 'model'>,
  options: NgcWorkerPoolOptions = {},
): RolloutFunction & { close(): Promise<void> } {
  const pool = new WorkerPoolRollouts<NgcRolloutJob, NgcRollout[]>(
    new URL('./train-rollout-worker.js', import.meta.url),
    { threads: options.threads },
  );
  const rollouts = async (requests: readonly RolloutRequest[], step: number) => {
    const snapshot = await packSnapshot(model.parameters, step);
    const starts = chunkStarts(requests.length, pool.threads);
    const jobs = starts.map((start, j) => ({
      config: model.config,
      settings,
      requests: requests.slice(start, starts[j + 1] ?? requests.length),
    }));
    try {
      return (await pool.run(jobs, snapshot)).flat();
    } catch (error) {
      if (!(error instanceof RolloutError)) throw error;
      const start = starts[error.index]!;
      const last = (starts[error.index + 1] ?? requests.length) - 1;
      throw new RolloutError(start, error.cause, `requests[${start}…${last}]`);
    }
  };
  return Object.assign(rollouts, { close: () => pool.close() });
}
