import { LetheError } from '@lethe/core';
import type { PolicySnapshot } from './policy-snapshot';
import { RolloutError } from './rollout-error';
import type { RolloutFunction, RolloutRunner } from './rollout-runner';

/**
 * A {@link RolloutRunner} that calls a rollout function in this thread, one request after the
 * other in request order. It works anywhere tfjs does (browsers included), shares the learner's
 * tfjs engine and backend, and gives the same results as `WorkerPoolRollouts` (from
 * `@lethe/rl-grpo/node`) running the same function, so a trainer can start in process and move
 * its rollouts to worker threads without changing its numbers.
 *
 * @example
 * ```ts
 * const rollouts = new InProcessRollouts(({ request, snapshot }) => sample(request, snapshot));
 * const results = await rollouts.run(requests, await packSnapshot(model.parameters, step));
 * ```
 */
export class InProcessRollouts<TRequest, TResult> implements RolloutRunner<TRequest, TResult> {
  private readonly rollout: RolloutFunction<TRequest, TResult>;
  private closed = false;

  /**
   * @param rollout the rollout of one request.
   * @throws LetheError `E_ARG` when `rollout` is not a function.
   */
  constructor(rollout: RolloutFunction<TRequest, TResult>) {
    if (typeof rollout !== 'function') {
      throw new LetheError('E_ARG', `must be a function, got ${typeof rollout}`, 'rollout');
    }
    this.rollout = rollout;
  }

  /**
   * Runs each request in turn; results in request order.
   *
   * Rejects with LetheError `E_STATE` after {@link InProcessRollouts.close}, or a
   * {@link RolloutError} naming the first request whose rollout threw (later ones do not run).
   */
  async run(requests: readonly TRequest[], snapshot: PolicySnapshot): Promise<TResult[]> {
    if (this.closed) throw new LetheError('E_STATE', 'rollouts were closed', 'InProcessRollouts');
    const results: TResult[] = [];
    for (const [index, request] of requests.entries()) {
      try {
        results.push(await this.rollout({ request, snapshot }));
      } catch (error) {
        throw new RolloutError(index, error);
      }
    }
    return results;
  }

  /** Marks the runner closed; there is nothing to release. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
