import type { PolicySnapshot } from './policy-snapshot';

/** What a rollout function gets for one request: the request and the weights to sample with. */
export interface RolloutTask<TRequest> {
  /** One request, e.g. a prompt and the seed of its sampling streams. */
  readonly request: TRequest;
  /** The policy's weights. */
  readonly snapshot: PolicySnapshot;
}

/**
 * Produces the result of one request (e.g. sampled tokens, log-probabilities, rewards). For
 * rollouts to be reproducible whatever runs them, the result must depend only on the task: each
 * request carries its own seed.
 */
export type RolloutFunction<TRequest, TResult> = (
  task: RolloutTask<TRequest>,
) => TResult | Promise<TResult>;

/**
 * Runs rollouts for a learner: the learner packs its weights into a {@link PolicySnapshot} and
 * hands over a batch of requests; the runner samples them, wherever it runs them (this thread,
 * a worker pool), and returns one result per request.
 */
export interface RolloutRunner<TRequest, TResult> {
  /**
   * Runs every request against `snapshot`; the results are in request order. Rejects with a
   * `RolloutError` naming the first request that failed.
   */
  run(requests: readonly TRequest[], snapshot: PolicySnapshot): Promise<TResult[]>;
  /** Releases the runner's resources; it cannot run afterwards. Closing twice is harmless. */
  close(): Promise<void>;
}
