import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { assertInteger, LetheError } from '@lethe/core';
import { Tinypool } from 'tinypool';
import { chunkStarts } from './chunk-starts';
import { type ChunkOutcome, type ChunkTask, chunkWorkerUrl } from './chunk-worker';
import type { PolicySnapshot } from './policy-snapshot';
import { RolloutError } from './rollout-error';
import type { RolloutRunner } from './rollout-runner';

/** Options of a {@link WorkerPoolRollouts}. */
export interface WorkerPoolOptions {
  /** Worker threads (integer ≥ 1). Default `os.availableParallelism() − 1`, at least 1. */
  readonly threads?: number;
}

/**
 * A {@link RolloutRunner} on a pool of Node worker threads (tinypool). Each thread imports the
 * worker module `worker` once and keeps it, with its own tfjs engine and whatever the module
 * caches (weights in a `SnapshotCache`), for the pool's lifetime. The module's default export is
 * a `RolloutFunction`: `(task: { request, snapshot }) => result`.
 *
 * `run` splits the requests into at most `threads` contiguous chunks of near-equal size, one
 * task per chunk, and concatenates the results in request order. Requests and results cross
 * threads by structured clone, so they must be plain data; a snapshot on a `SharedArrayBuffer`
 * (what `packSnapshot` makes in Node) is shared, not copied. With results that depend only on
 * (request, snapshot), any thread count gives the results of `InProcessRollouts`.
 *
 * @example
 * ```ts
 * const pool = new WorkerPoolRollouts<Prompt, Rollout>(new URL('./rollout-worker.mjs', import.meta.url));
 * const rollouts = await pool.run(prompts, await packSnapshot(model.parameters, step));
 * await pool.close();
 * ```
 */
export class WorkerPoolRollouts<TRequest, TResult> implements RolloutRunner<TRequest, TResult> {
  /** Number of worker threads. */
  readonly threads: number;
  private readonly pool: Tinypool;
  private closed = false;

  /**
   * Starts the threads, which begin importing `worker` at once.
   *
   * @param worker the worker module: a path (relative ones resolve against the current directory)
   * or a `file:` URL of a module Node can import in a worker thread (`.mjs`, or `.js` in an ESM
   * package).
   * @throws LetheError `E_ARG` naming `worker` when it is empty, not a `file:` URL or missing, or
   * `threads` when it is not an integer ≥ 1.
   */
  constructor(worker: string | URL, options: WorkerPoolOptions = {}) {
    const { threads = Math.max(1, availableParallelism() - 1) } = options;
    this.threads = assertInteger(threads, 'threads', 1);
    const url = workerModuleUrl(worker);
    this.pool = new Tinypool({
      filename: chunkWorkerUrl(url),
      minThreads: this.threads,
      maxThreads: this.threads,
    });
  }

  /**
   * Runs the requests on the pool; results in request order. Every chunk runs to its end or its
   * first failure before this settles.
   *
   * Rejects with LetheError `E_STATE` after {@link WorkerPoolRollouts.close}, `E_ARG` naming
   * `worker` when the module cannot be imported or has no default function export, or a
   * {@link RolloutError} naming the first failed request.
   */
  async run(requests: readonly TRequest[], snapshot: PolicySnapshot): Promise<TResult[]> {
    if (this.closed) throw new LetheError('E_STATE', 'pool was closed', 'WorkerPoolRollouts');
    const starts = chunkStarts(requests.length, this.threads);
    const outcomes = await Promise.allSettled(
      starts.map((start, c) => {
        const task: ChunkTask<TRequest> = {
          requests: requests.slice(start, starts[c + 1] ?? requests.length),
          snapshot,
        };
        return this.pool.run(task) as Promise<ChunkOutcome<TResult>>;
      }),
    );
    const results: TResult[] = [];
    outcomes.forEach((outcome, c) => {
      const start = starts[c]!;
      if (outcome.status === 'rejected') {
        const last = (starts[c + 1] ?? requests.length) - 1;
        throw new RolloutError(start, outcome.reason, `requests[${start}…${last}]`);
      }
      const value = outcome.value;
      if ('unusable' in value) throw new LetheError('E_ARG', value.unusable, 'worker');
      if ('failed' in value) throw new RolloutError(start + value.failed, value.error);
      for (const result of value.results) results.push(result);
    });
    return results;
  }

  /** Stops the worker threads (tasks still running are rejected). Closing twice is harmless. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }
}

/** Absolute `file:` URL of the worker module, checked to exist. */
function workerModuleUrl(worker: string | URL): string {
  let path: string;
  if (worker instanceof URL) {
    if (worker.protocol !== 'file:') {
      throw new LetheError('E_ARG', `must be a file: URL, got ${worker.protocol}`, 'worker');
    }
    path = fileURLToPath(worker);
  } else {
    if (typeof worker !== 'string' || worker.trim() === '') {
      throw new LetheError('E_ARG', 'must be a non-empty path or a file: URL', 'worker');
    }
    path = worker.startsWith('file:') ? fileURLToPath(worker) : resolve(worker);
  }
  if (!existsSync(path)) throw new LetheError('E_ARG', `no such file: ${path}`, 'worker');
  return pathToFileURL(path).href;
}
