import type { ActionLevels } from '../actions/action-set';
import type { SolControllerParameters } from '../controller/controller-parameters';
import type { RolloutInput, RolloutSettings } from './counterfactual-rollout';

/**
 * One queued item of a SOL update's rollouts (`queueSolRollouts`): a contiguous run of the
 * update's inputs, whose schedules a worker runs as one `counterfactualRollouts` call on the
 * frozen LM of a model directory — a path as the worker's working directory resolves it, its
 * content hash among the run's requirements.
 */
export interface SolQueueRolloutJob {
  readonly modelDir: string;
  /** `modelIdentity` of the trainer's LM: a worker whose model at `modelDir` has another fails. */
  readonly modelIdentity: string;
  readonly controller: SolControllerParameters;
  readonly actions: ActionLevels;
  readonly inputs: readonly RolloutInput[];
  /** The update's settings, `firstStream` moved to this chunk's first schedule. */
  readonly settings: RolloutSettings;
}
