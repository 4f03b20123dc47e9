import type { ModelConfig } from '@lethe/model';
import type { CollectRolloutsOptions, RolloutRequest } from './collect-rollouts';

/**
 * One queued item of an NGC update's rollouts (`queueRollouts`): a contiguous run of requests
 * that a worker generates as one `collectRollouts` call with the weights of a snapshot file —
 * a path as the worker's working directory resolves it, its hash among the run's requirements.
 */
export interface NgcQueueRolloutJob {
  readonly config: ModelConfig;
  /** The learner's weights at this update (`writeSnapshotFile`). */
  readonly weights: string;
  readonly settings: Omit<CollectRolloutsOptions, 'model'>;
  readonly requests: readonly RolloutRequest[];
}
