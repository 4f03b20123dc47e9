/**
 * `@lethe/policies-sol`: Self-Optimizing Language Models (SOL) — per decode step, a small
 * controller picks the compute of a frozen LM from a discrete action set (attention keep rate κ,
 * MLP input-channel keep rate ρ, activation bits q), steered toward requested per-axis budgets.
 * The controller ({@link SolController}) runs on plain typed arrays; its differentiable twin for
 * training is in `@lethe/policies-sol/train`.
 *
 * @packageDocumentation
 */

export { actionControls, actionControlTable } from './actions/action-controls';
export {
  ACTION_PRESETS,
  type ActionPreset,
  presetLevels,
} from './actions/action-presets';
export {
  type ActionLevels,
  ActionSet,
  AXES,
  type AxisUsage,
  FULL_PRECISION_BITS,
  type SolAction,
} from './actions/action-set';
export { netKeepRate } from './actions/net-keep';
export { type BaselineOptions, BaselinePolicy } from './baselines/baseline-policy';
export {
  SOL_BASELINE_PROVIDERS,
  solDacProvider,
  solEmcProvider,
  solFixedProvider,
  solRandomProvider,
  solRandomSteeredProvider,
} from './baselines/baseline-providers';
export { steerAction, steerLevel } from './baselines/budget-steering';
export { cosineDrift } from './baselines/cosine-drift';
export { DriftAwarePolicy, type DriftMemory } from './baselines/drift-aware';
export { EntropyMatchedPolicy } from './baselines/entropy-matched';
export {
  type FixedScheduleOptions,
  FixedSchedulePolicy,
  type FixedScheduleState,
} from './baselines/fixed-schedule';
export { bracketLevels, LEVEL_TOLERANCE, type LevelBracket } from './baselines/level-bracket';
export { normalisedEntropy } from './baselines/normalised-entropy';
export { RandomSchedulePolicy } from './baselines/random-schedule';
export { RandomSteeredPolicy } from './baselines/random-steered';
export { SteeredEpisodeBudget } from './baselines/steered-budget';
export {
  type SteeredOptions,
  SteeredPolicy,
  type SteeredState,
} from './baselines/steered-policy';
export { actionAt, type UsageLevels, usageLevels } from './baselines/usage-levels';
export {
  budgetPenalty,
  DEFAULT_PENALTY_WEIGHTS,
  DEFAULT_TOLERANCE,
  hingePenalty,
} from './budget/budget-penalty';
export { type BudgetTargets, targetVector } from './budget/budget-targets';
export { BUDGET_FEATURES, EpisodeBudget } from './budget/episode-budget';
export {
  DEFAULT_SAMPLING_TEMPERATURE,
  greedyAction,
  sampleAction,
} from './controller/action-choice';
export {
  checkControllerConfig,
  controllerConfig,
  DEFAULT_CONTROLLER_OPTIONS,
  type SolControllerConfig,
  type SolControllerOptions,
} from './controller/controller-config';
export { NO_PREVIOUS_ACTION } from './controller/controller-constants';
export { ControllerEpisode } from './controller/controller-episode';
export {
  CONTROLLER_FILE_FORMAT,
  CONTROLLER_FILE_VERSION,
  type ControllerFileConfig,
  checkControllerInputSize,
  decodeController,
  type EncodedController,
  encodeController,
} from './controller/controller-file';
export {
  CONTROLLER_TENSOR_NAMES,
  type ControllerInitOptions,
  type ControllerTensorName,
  type ControllerTensors,
  checkControllerParameters,
  controllerParameterCount,
  controllerTensorShapes,
  initControllerParameters,
  type SolControllerParameters,
} from './controller/controller-parameters';
export {
  type ControllerStepInput,
  type ControllerStepOutput,
  SolController,
} from './controller/sol-controller';
export {
  decodeSolPolicy,
  encodeSolPolicy,
  SOL_TENSORS_FILE,
  type SolBaseModel,
  type SolManifestParameters,
  type SolTrained,
} from './policy/sol-directory';
export { solMatrixFixture } from './policy/sol-matrix-fixture';
export {
  SolPolicy,
  type SolPolicyOptions,
  type SolSampling,
  type SolSequenceState,
} from './policy/sol-policy';
export { type SolPolicyRecord, solPolicyContents } from './policy/sol-policy-contents';
export {
  SOL_DEFAULT_ALWAYS_DENSE,
  SOL_DEFAULT_HORIZON,
  type SolLoaded,
  solProvider,
} from './policy/sol-provider';
