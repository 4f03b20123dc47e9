/**
 * `@lethe/policies-sol/train`: SOL's controller training. The controller as a differentiable
 * tfjs graph ({@link ControllerGraph}) — the same architecture and tensors as the inference
 * `SolController`, run over whole episodes in parallel — and GRPO with per-sequence budget
 * sampling (§4): counterfactual teacher-forced rollouts of the frozen LM
 * ({@link counterfactualRollouts}), discounted returns minus the budget penalty, process-level
 * advantages, the PPO-clipped update ({@link grpoUpdate}) and a resumable trainer
 * ({@link SolTrainer}). Needs the optional peer dependencies `@lethe/model`, `@lethe/rl-grpo`
 * and `@lethe/tensor`.
 *
 * @packageDocumentation
 */
export {
  type BudgetRanges,
  checkBudgetRanges,
  DEFAULT_BUDGET_RANGES,
  sampleBudgetTargets,
  type TargetRange,
} from './budget-sampling';
export { type ControllerBatchOutput, ControllerGraph } from './controller-graph';
export type { ControllerBatch } from './controller-inputs';
export {
  counterfactualRollouts,
  type RolloutGroup,
  type RolloutInput,
  type RolloutSettings,
  type ScheduleRollout,
} from './counterfactual-rollout';
export type { DocumentSource, PrefixedDocument, TrainingDocument } from './document-schedule';
export {
  type GrpoUpdateOptions,
  type GrpoUpdateResult,
  grpoUpdate,
  policyVariables,
} from './grpo-update';
export { longestPrefix, type PrefixRange } from './prefix-range';
export {
  RecordingPolicy,
  type RecordingPolicyOptions,
  type RecordingState,
  type ScheduleSteps,
} from './recording-policy';
export {
  checkDiscount,
  DEFAULT_DISCOUNT,
  discountedReturns,
  penalisedReturns,
} from './returns';
export type { SolRolloutFunction, SolRolloutRequest } from './rollout-function';
export {
  SOL_CHECKPOINT_FORMAT,
  SOL_CHECKPOINT_VERSION,
  SolTrainer,
  type SolTrainResult,
} from './sol-trainer';
export type {
  SolAdamOptions,
  SolProgress,
  SolTrainerOptions,
  SolTrainerSettings,
  SolUpdateMetrics,
} from './sol-trainer-options';
