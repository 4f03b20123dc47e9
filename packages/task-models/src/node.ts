/**
 * `@lethe/task-models/node`: the Node-only parts — pretraining a task model into a directory
 * (resumable, with `@lethe/model`'s SFT trainer), the `lethe pretrain` flags, loading a task model
 * (and a backbone with other weights) from its directory, the held-out evaluation of a fresh
 * model, the training-state guard of a resumed run and its record (time, validation scores).
 *
 * @packageDocumentation
 */
export {
  evaluateFullCache,
  type FullCacheEvaluationOptions,
  heldOutPrompts,
} from './held-out-evaluation';
export { type InitialModel, initialModel } from './initial-model';
export { loadTaskBackbone } from './load-task-backbone';
export { loadTaskModel } from './load-task-model';
export {
  type ParsedPretrainFlags,
  PRETRAIN_FLAGS,
  type PretrainFlag,
  parsePretrainFlags,
  pretrainCommand,
  pretrainFlagOf,
} from './pretrain-flags';
export {
  defaultWarmupSteps,
  PRETRAIN_DEFAULTS,
  type PretrainOptions,
  type PretrainSettings,
  resolvePretrainSettings,
} from './pretrain-settings';
export {
  DEFAULT_CHECKPOINT_EVERY,
  type PretrainResult,
  pretrainTaskModel,
} from './pretrain-task-model';
export type { TaskModel } from './read-task-model-files';
export {
  readTrainingRecord,
  TRAINING_RECORD_FILE,
  type TrainingRecord,
} from './training-record';
export { guardTrainingState, TRAINING_STATE_SETTINGS_FILE } from './training-state-guard';
