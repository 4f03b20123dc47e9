import type { ActionSet } from '../actions/action-set';
import type { SolControllerParameters } from '../controller/controller-parameters';
import type { RolloutGroup, RolloutInput, RolloutSettings } from './counterfactual-rollout';

/** What one update asks its rollouts for: `counterfactualRollouts`'s arguments but the model. */
export interface SolRolloutRequest {
  /** The controller's parameters at this update. */
  readonly controller: SolControllerParameters;
  readonly actions: ActionSet;
  /** The update's `B` inputs. */
  readonly inputs: readonly RolloutInput[];
  readonly settings: RolloutSettings;
}

/**
 * Runs an update's counterfactual schedules on the trainer's frozen LM, one group per input in
 * input order, exactly as `counterfactualRollouts(model, new SolController(controller), actions,
 * inputs, settings)` does in this thread (`SolTrainer`'s default); `queueSolRollouts` of
 * `@lethe/policies-sol/train/node` runs them on a Redis job queue instead.
 */
export type SolRolloutFunction = (request: SolRolloutRequest) => Promise<RolloutGroup[]>;
