import { assertInteger, LetheError } from '@lethe/core';
import { type Job, Queue, QueueEvents } from 'bullmq';
import { jobIdOf, QUEUE_PREFIX, type QueueJobData, queueName } from './queue-job';
import { decodeQueueValue, encodeQueueValue } from './queue-json';
import { connectionOptions, parseRedisUrl, redisLabel } from './redis-url';
import type { RunRequirements } from './requirements';

/** One work item: a key unique within its run, and what a worker needs to compute it. */
export interface QueueItem<P> {
  /** Letters, digits, `_`, `.` and `-`: with the run it names the item's job. */
  readonly key: string;
  /**
   * What the worker's module gets: plain data and typed arrays, as a thread pool takes them
   * (`encodeQueueValue` carries them over Redis's JSON and back unchanged).
   */
  readonly payload: P;
}

/** Options of {@link runOnQueue}. */
export interface QueueRunOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /** The kind of item: workers take it from the queue `lethe-<kind>`. */
  readonly kind: string;
  /**
   * The run's id: the same for a rerun of the same work (e.g. a hash of its settings and
   * requirements), so the rerun takes over the jobs an earlier coordinator left.
   */
  readonly run: string;
  /** What a worker must have (see `describeRequirements`). */
  readonly requirements: RunRequirements;
  /** Stops the run: it rejects with `signal.reason`, leaving its jobs for a rerun. */
  readonly signal?: AbortSignal;
  /** Tries per item when a worker dies or throws (default 3). */
  readonly attempts?: number;
  /** How often the run's jobs are checked in Redis (missed events, lost jobs), ms (default 1,000). */
  readonly reconcileMs?: number;
  /** How long Redis may be unreachable before the run stops, ms (default 60,000). */
  readonly redisTimeoutMs?: number;
  /** Called when Redis lost jobs of the run (a restart without persistence) and they were added again. */
  readonly onRequeued?: (count: number) => void;
  /**
   * Called once per distinct refusal a worker wrote to one of the run's jobs (its packages or
   * files differ from the run's: see `startQueueWorker`); the run goes on for other workers.
   */
  readonly onRefused?: (message: string) => void;
}

/** How long finished jobs stay in Redis for a rerun to collect (7 days), s. */
const KEEP_FINISHED_S = 7 * 24 * 3600;

/**
 * Runs `items` on the queue of `options.kind`: each becomes a job workers on any machine take
 * (`startQueueWorker`), and `onResult(index, result)` is called once per item with the value its
 * worker returned, one call at a time, in the order results arrive. Resolves when every item has
 * a result.
 *
 * Jobs are named by run and key, so a rerun of a run (after this process was killed) finds them:
 * a finished job's result is taken without computing it again, a waiting or running one is waited
 * for, a missing one is added. A worker that dies mid-item leaves its job to another once its
 * lock lapses (BullMQ's stalled-job check); a result is counted once however often it arrives.
 * Jobs Redis loses (a restart without persistence) are added again when the next check finds
 * them gone. A job that fails `attempts` times fails the run. A worker whose installation differs
 * from the run's requirements puts its job back untried; `onRefused` hears why.
 *
 * @throws LetheError `E_ARG` naming the option at fault, `items[i].key` (repeated or unsafe) or
 *   what in `items[i].payload` JSON cannot carry (see `encodeQueueValue`);
 *   `E_QUEUE` when an item failed on every try (its worker's error in the message) or Redis did
 *   not answer for `redisTimeoutMs`; the error `onResult` throws. Rejects with `signal.reason`
 *   when aborted.
 */
export async function runOnQueue<P, R>(
  items: readonly QueueItem<P>[],
  onResult: (index: number, result: R) => void | Promise<void>,
  options: QueueRunOptions,
): Promise<void> {
  const address = parseRedisUrl(options.redis);
  const name = queueName(options.kind);
  const attempts = assertInteger(options.attempts ?? 3, 'attempts', 1);
  const reconcileMs = assertInteger(options.reconcileMs ?? 1000, 'reconcileMs', 1);
  const redisTimeoutMs = assertInteger(options.redisTimeoutMs ?? 60_000, 'redisTimeoutMs', 1);
  const outstanding = new Map<string, number>();
  items.forEach((item, i) => {
    const id = jobIdOf(options.run, item.key);
    if (outstanding.has(id)) {
      throw new LetheError('E_ARG', `repeats key ${JSON.stringify(item.key)}`, `items[${i}].key`);
    }
    outstanding.set(id, i);
  });
  // Encoded before anything is sent: a payload JSON cannot carry fails the run at once.
  const payloads = items.map((item, i) => encodeQueueValue(item.payload, `items[${i}].payload`));
  options.signal?.throwIfAborted();
  if (items.length === 0) return;

  const connection = connectionOptions(address);
  const queue = new Queue(name, { connection, prefix: QUEUE_PREFIX });
  const events = new QueueEvents(name, { connection, prefix: QUEUE_PREFIX });
  // Connection errors are the client's to retry and the watchdog's to time out, not noise.
  queue.on('error', () => undefined);
  events.on('error', () => undefined);
  // The run's own copy: it forgets each job as its result is recorded; `outstanding` keeps every index.
  const run = new RunState(new Map(outstanding), onResult);
  const jobOptions = {
    attempts,
    removeOnComplete: { age: KEEP_FINISHED_S },
    removeOnFail: { age: KEEP_FINISHED_S },
    keepLogs: 20,
  };
  const refusals = new Set<string>();
  const dataOf = (index: number): QueueJobData => ({
    run: options.run,
    requirements: options.requirements,
    payload: payloads[index],
  });
  /** Settles one job as Redis holds it: a result, a failure, or nothing yet. */
  const settle = async (
    id: string,
    job: Job | undefined,
  ): Promise<'missing' | 'pending' | 'done'> => {
    if (job === undefined) return 'missing';
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') {
      // `job` may have been read before it finished (its result not in it yet): a finished job no
      // longer changes, so it is read again now.
      const finished = await queue.getJob(id);
      if (finished === undefined) return 'missing';
      if (state === 'failed') {
        run.fail(
          new LetheError(
            'E_QUEUE',
            `item ${outstanding.get(id)} (job ${id}) failed on every one of ${finished.attemptsMade} tries: ${finished.failedReason}`,
            'items',
          ),
        );
        return 'done';
      }
      await run.record(id, decodeQueueValue(finished.returnvalue) as R);
      // Its result is kept by the caller now; a removal that fails leaves it to expire.
      await finished.remove().catch(() => undefined);
      return 'done';
    }
    if (state === 'delayed' && options.onRefused !== undefined) {
      // Only a refusing worker delays a job of a run: its reason is in the job's log.
      const { logs } = await queue.getJobLogs(id);
      for (const line of logs) {
        if (refusals.has(line)) continue;
        refusals.add(line);
        options.onRefused(line);
      }
    }
    return 'pending';
  };
  let lastAnswer = Date.now();
  let unreachable = false;
  /** Checks every outstanding job: results missed, failures, jobs lost (added again). */
  const reconcile = async (adding: boolean): Promise<void> => {
    const lost: string[] = [];
    for (const id of [...run.pending()]) {
      if (run.settled) return;
      const verdict = await settle(id, await queue.getJob(id));
      if (verdict === 'missing') lost.push(id);
    }
    lastAnswer = Date.now();
    // A result recorded since the check is not lost.
    const missing = lost.filter((id) => run.isPending(id));
    if (missing.length === 0 || run.settled) return;
    await queue.addBulk(
      missing.map((id) => ({
        name: options.kind,
        data: dataOf(outstanding.get(id)!),
        opts: { ...jobOptions, jobId: id },
      })),
    );
    lastAnswer = Date.now();
    if (!adding) options.onRequeued?.(missing.length);
  };

  const onAbort = (): void => run.stop(options.signal!.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const inFlight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>): void => {
    inFlight.add(work);
    work.finally(() => inFlight.delete(work)).catch(() => undefined);
  };
  const onFinished = ({ jobId }: { jobId: string }): void => {
    if (!run.isPending(jobId)) return;
    track(
      queue
        .getJob(jobId)
        .then((job) => settle(jobId, job))
        .catch((error) => run.fail(error)),
    );
  };
  events.on('completed', onFinished);
  events.on('failed', onFinished);
  let checking = false;
  const timer = setInterval(() => {
    if (Date.now() - lastAnswer > redisTimeoutMs) {
      unreachable = true;
      run.fail(
        new LetheError(
          'E_QUEUE',
          `no answer from Redis at ${redisLabel(address)} for ${redisTimeoutMs} ms`,
          'redis',
        ),
      );
      return;
    }
    if (checking) return;
    checking = true;
    track(
      reconcile(false)
        .catch((error) => run.fail(error))
        .finally(() => {
          checking = false;
        }),
    );
  }, reconcileMs);
  try {
    await events.waitUntilReady();
    await reconcile(true);
    await run.finished;
  } finally {
    clearInterval(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (unreachable) {
      // Nothing more can be said to a Redis that does not answer: drop the connections.
      await Promise.allSettled([events.disconnect(), queue.disconnect()]);
    } else {
      if (run.failed) await removeWaiting(queue, run.pending()).catch(() => undefined);
      // What is still in flight ends before the connections close.
      await Promise.allSettled([...inFlight]);
      await Promise.allSettled([events.close(), queue.close()]);
    }
  }
}

/** Removes the jobs among `ids` that no worker holds (a failed run's leftovers). */
async function removeWaiting(queue: Queue, ids: Iterable<string>): Promise<void> {
  for (const id of ids) {
    const job = await queue.getJob(id);
    if (job === undefined) continue;
    const state = await job.getState();
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') await job.remove();
  }
}

/**
 * The results still awaited and how the run ends: each result recorded once, `onResult` calls
 * one at a time, the first failure (or stop) ending the run.
 */
class RunState<R> {
  readonly finished: Promise<void>;
  settled = false;
  failed = false;
  private resolve!: () => void;
  private reject!: (error: unknown) => void;
  private chain: Promise<void> = Promise.resolve();
  /** Results not yet handed to `onResult`. */
  private unhandled: number;

  constructor(
    private readonly waiting: Map<string, number>,
    private readonly onResult: (index: number, result: R) => void | Promise<void>,
  ) {
    this.unhandled = waiting.size;
    this.finished = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.finished.catch(() => undefined);
  }

  pending(): IterableIterator<string> {
    return this.waiting.keys();
  }

  isPending(id: string): boolean {
    return this.waiting.has(id) && !this.settled;
  }

  /** Records job `id`'s result once (a later arrival of the same result is ignored). */
  record(id: string, result: R): Promise<void> {
    const index = this.waiting.get(id);
    if (index === undefined || this.settled) return this.chain;
    this.waiting.delete(id);
    this.chain = this.chain.then(async () => {
      if (this.settled) return;
      try {
        await this.onResult(index, result);
      } catch (error) {
        this.fail(error);
        return;
      }
      this.unhandled -= 1;
      if (this.unhandled === 0) {
        this.settled = true;
        this.resolve();
      }
    });
    return this.chain;
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.failed = true;
    this.stop(error);
  }

  stop(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(reason);
  }
}
