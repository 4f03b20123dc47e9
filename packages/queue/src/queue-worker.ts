import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { assertInteger, LetheError } from '@lethe/core';
import { DelayedError, type Job, Worker } from 'bullmq';
import { Tinypool } from 'tinypool';
import { RequirementChecker } from './describe-requirements';
import { QUEUE_PREFIX, type QueueJobData, queueName } from './queue-job';
import { decodeQueueValue, encodeQueueValue } from './queue-json';
import { connectionOptions, parseRedisUrl } from './redis-url';

/** One item a worker finished, for its log. */
export interface QueueWorkerEvent {
  readonly kind: string;
  readonly run: string;
  /** The item's job id. */
  readonly job: string;
  /** Wall time of the item on its thread, ms. */
  readonly ms: number;
}

/** Options of {@link startQueueWorker}. */
export interface QueueWorkerOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /**
   * The kinds of item this worker takes, each with the module that computes one: a path or
   * `file:` URL whose default export maps an item's payload to its result (plain data and typed
   * arrays), as the thread pools of Lethe's runners use (`sweep-cell-worker.js` of
   * `@lethe/eval`, …).
   */
  readonly kinds: Readonly<Record<string, string | URL>>;
  /** Items computed side by side, each on its own thread (default 1). */
  readonly threads?: number;
  /**
   * How long a taken item stays locked without a renewal, ms (default 30,000; renewed every half
   * of it while the item runs). A worker that dies leaves its items to others after this.
   */
  readonly lockMs?: number;
  /** How often this worker looks for items whose lock lapsed, ms (default `lockMs`). */
  readonly stalledCheckMs?: number;
  /**
   * How long an item this worker refuses waits before any worker may take it again, ms (default
   * 5,000).
   */
  readonly refusalDelayMs?: number;
  /** Called after each item. */
  readonly onItem?: (event: QueueWorkerEvent) => void;
  /**
   * Called once per run this worker refuses, with LetheError `E_QUEUE` naming `requirements`
   * that says what differs.
   */
  readonly onRefused?: (error: LetheError) => void;
}

/** A running worker. */
export interface QueueWorkerHandle {
  /** Resolves when the worker has stopped (after {@link QueueWorkerHandle.close}). */
  readonly done: Promise<void>;
  /** Stops taking items, lets those running finish, and disconnects. Closing twice is harmless. */
  close(): Promise<void>;
}

/**
 * Starts a worker: it takes items of each kind in `options.kinds` from Redis and computes them
 * on a pool of `threads` Node worker threads (the module of the item's kind, imported once per
 * thread and kept, with whatever it caches), returning each result to the run's coordinator
 * (`runOnQueue`). Before an item it compares its installation with the run's requirements —
 * the versions of the computing package and its Lethe and tfjs dependencies, the content of the
 * files the run reads (as the item's paths resolve here) — and on any difference refuses the
 * run: the item goes back to the queue untried (for `refusalDelayMs`, so another worker takes
 * it), the reason is written to the item's job log, where the coordinator reads it, and the
 * worker goes on with other runs' items, never computing one of the refused run.
 *
 * @example
 * ```ts
 * const worker = startQueueWorker({ redis: 'redis://127.0.0.1:6379', kinds: { 'sweep-cell': cellModule }, threads: 2 });
 * process.on('SIGINT', () => void worker.close());
 * await worker.done;
 * ```
 * @throws LetheError `E_ARG` naming `redis`, `kinds` (empty, or a module that is missing) or
 *   `threads` / `lockMs` / `stalledCheckMs` / `refusalDelayMs` (not an integer ≥ 1).
 */
export function startQueueWorker(options: QueueWorkerOptions): QueueWorkerHandle {
  const connection = connectionOptions(parseRedisUrl(options.redis));
  const threads = assertInteger(options.threads ?? 1, 'threads', 1);
  const lockMs = assertInteger(options.lockMs ?? 30_000, 'lockMs', 1);
  const stalledCheckMs = assertInteger(options.stalledCheckMs ?? lockMs, 'stalledCheckMs', 1);
  const refusalDelayMs = assertInteger(options.refusalDelayMs ?? 5000, 'refusalDelayMs', 1);
  const modules = Object.entries(options.kinds ?? {}).map(
    ([kind, module]) => [kind, moduleUrl(module, `kinds.${kind}`)] as const,
  );
  if (modules.length === 0) throw new LetheError('E_ARG', 'names no kind of item', 'kinds');
  for (const [kind] of modules) queueName(kind);

  const pool = new Tinypool({ minThreads: threads, maxThreads: threads });
  const checker = new RequirementChecker();
  const refused = new Map<string, LetheError>();
  /** Why this worker refuses `run`, checked on its first item; undefined when it takes it. */
  const refusalOf = async (data: QueueJobData, url: string): Promise<LetheError | undefined> => {
    if (refused.has(data.run)) return refused.get(data.run);
    const differences = await checker.mismatches(data.requirements, url);
    if (differences.length === 0) return undefined;
    const error = new LetheError(
      'E_QUEUE',
      `a worker refuses run ${data.run}: its installation differs from the run's —\n  ${differences.join('\n  ')}`,
      'requirements',
    );
    refused.set(data.run, error);
    options.onRefused?.(error);
    return error;
  };
  let closing: Promise<void> | undefined;
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => {
    stopped = resolve;
  });

  const workers = modules.map(([kind, url]) => {
    const process = async (job: Job<QueueJobData>, token?: string): Promise<unknown> => {
      const { run, payload } = job.data;
      const refusal = await refusalOf(job.data, url);
      if (refusal !== undefined) {
        await job.log(refusal.message);
        await job.moveToDelayed(Date.now() + refusalDelayMs, token);
        throw new DelayedError();
      }
      const started = performance.now();
      const result: unknown = await pool.run(decodeQueueValue(payload), { filename: url });
      options.onItem?.({ kind, run, job: job.id ?? '', ms: performance.now() - started });
      return encodeQueueValue(result, 'result');
    };
    return new Worker(queueName(kind), process, {
      connection,
      prefix: QUEUE_PREFIX,
      concurrency: threads,
      lockDuration: lockMs,
      stalledInterval: stalledCheckMs,
      maxStalledCount: 1,
    });
  });
  // Connection errors are retried by the client; they are not the worker's end.
  for (const worker of workers) worker.on('error', () => undefined);

  const close = (): Promise<void> => {
    closing ??= (async () => {
      await Promise.allSettled(workers.map((worker) => worker.close()));
      await pool.destroy();
      stopped();
    })();
    return closing;
  };
  return { done, close };
}

/** Absolute `file:` URL of a kind's module, checked to exist. */
function moduleUrl(module: string | URL, argument: string): string {
  let path: string;
  if (module instanceof URL) {
    if (module.protocol !== 'file:') {
      throw new LetheError('E_ARG', `must be a file: URL, got ${module.protocol}`, argument);
    }
    path = fileURLToPath(module);
  } else {
    if (typeof module !== 'string' || module.trim() === '') {
      throw new LetheError('E_ARG', 'must be a non-empty path or a file: URL', argument);
    }
    path = module.startsWith('file:') ? fileURLToPath(module) : resolve(module);
  }
  if (!existsSync(path)) throw new LetheError('E_ARG', `no such file: ${path}`, argument);
  return pathToFileURL(path).href;
}
