import type { DecoderModel } from '@lethe/model';
import { chunkStarts, type PolicySnapshot, packSnapshot, RolloutError } from '@lethe/rl-grpo';
import { WorkerPoolRollouts } from '@lethe/rl-grpo/node';
import type { PopulationEvaluator, PopulationJob } from './evaluate-population';
import type { NammEvaluationJob } from './evaluation-job';
import type { NammCompletion } from './prompt-request';

/** Options of {@link workerPoolEvaluator}. */
export interface NammWorkerPoolOptions {
  /** Worker threads (integer ≥ 1). Default `os.availableParallelism() − 1`, at least 1. */
  readonly threads?: number;
}

/**
 * A {@link PopulationEvaluator} on a pool of Node worker threads (pass it as `NammEvolution`'s
 * `evaluate`; `close()` it when done). Each call splits the members into one contiguous job per
 * thread; a thread evaluates its members one after the other, each as one `generate` batch of
 * every request (`evaluatePopulation`), and the completions come back in member order. A
 * completion depends only on the model, the member and the requests, so the result equals
 * `evaluatePopulation(model, job)` in this thread on the same backend (the threads run wasm).
 *
 * The model is frozen: its weights are packed once, at the first call, and each thread builds
 * it once. One pool serves one model.
 *
 * The threads run `dist/train-evaluation-worker.js` next to this module's build, so this works
 * from the package's build (ESM or CJS), not from its TypeScript sources.
 *
 * @throws LetheError `E_ARG` naming `threads` when it is not an integer ≥ 1. A call rejects with
 *   `E_STATE` after `close()`, or with a `RolloutError` naming `genomes[first…last]`, the members
 *   of the job that failed, with what it threw as the cause.
 * @example
 * ```ts
 * const evaluate = workerPoolEvaluator(model, { threads: 4 });
 * const evolution = new NammEvolution({ model, evaluate, … });
 * try { await evolution.train(); } finally { await evaluate.close(); }
 * ```
 */
export function workerPoolEvaluator(
  model: DecoderModel,
  options: NammWorkerPoolOptions = {},
): PopulationEvaluator & { close(): Promise<void> } {
  const pool = new WorkerPoolRollouts<NammEvaluationJob, NammCompletion[][]>(
    new URL('./train-evaluation-worker.js', import.meta.url),
    { threads: options.threads },
  );
  let snapshot: Promise<PolicySnapshot> | undefined;
  const evaluate = async (job: PopulationJob) => {
    snapshot ??= packSnapshot(model.parameters, 0);
    const members = job.genomes.length;
    const starts = chunkStarts(members, pool.threads);
    const jobs = starts.map((start, j) => ({
      config: model.config,
      genomes: job.genomes.slice(start, starts[j + 1] ?? members),
      requests: job.requests,
      settings: job.settings,
    }));
    try {
      return (await pool.run(jobs, await snapshot)).flat();
    } catch (error) {
      if (!(error instanceof RolloutError)) throw error;
      const start = starts[error.index]!;
      const last = (starts[error.index + 1] ?? members) - 1;
      throw new RolloutError(start, error.cause, `genomes[${start}…${last}]`);
    }
  };
  return Object.assign(evaluate, { close: () => pool.close() });
}
