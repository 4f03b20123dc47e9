import type { ModelConfig } from '@lethe/model';
import type { CollectRolloutsOptions, RolloutRequest } from './collect-rollouts';

/**
 * One task of the NGC rollout worker (`workerPoolRollouts`): a contiguous run of requests that
 * the worker generates as one `collectRollouts` call (one `generate` batch per eviction rate)
 * with the model built from the task's snapshot. Plain data, so it crosses threads by
 * structured clone.
 */
export interface NgcRolloutJob {
  /** Configuration of the model the snapshot's weights belong to. */
  readonly config: ModelConfig;
  /** Everything `collectRollouts` needs besides the model. */
  readonly settings: Omit<CollectRolloutsOptions, 'model'>;
  /** The requests, in the caller's order. */
  readonly requests: readonly RolloutRequest[];
}
