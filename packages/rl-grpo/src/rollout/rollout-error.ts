/**
 * A rollout failed: {@link RolloutError.index} is the position in `requests` of the request that
 * failed and `cause` is what was thrown (a structured clone of it when it came from a worker
 * thread). When a worker thread dies outright, the index is the first request of the chunk it
 * was running and the message names the whole chunk.
 *
 * @example
 * ```ts
 * try { await rollouts.run(requests, snapshot); }
 * catch (e) { if (e instanceof RolloutError) console.log(requests[e.index], e.cause); }
 * ```
 */
export class RolloutError extends Error {
  /** Index in `requests` of the request that failed. */
  readonly index: number;

  /**
   * @param index position of the failed request in `requests`.
   * @param cause what the rollout threw.
   * @param what the failed requests as the message names them; default `requests[index]`.
   */
  constructor(index: number, cause: unknown, what = `requests[${index}]`) {
    super(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = new.target.name;
    this.index = index;
  }
}
