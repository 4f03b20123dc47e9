/**
 * Tiny task models (Node-only: they are read from and written to directories): pretraining
 * with the SFT trainer of `@lethe/model` on a task's seeded examples, the task-model directory
 * format (`lethe-model.json` beside `config.json`, `model.safetensors`, `tokenizer.json`), its
 * loader, and the `lethe pretrain` command that recreates a model.
 *
 * @packageDocumentation
 */
export {
  type GenerationBatchesOptions,
  generationBatches,
  REPLACEMENT_STRIDE,
} from './generation-batches';
export {
  evaluateFullCache,
  type FullCacheEvaluationOptions,
  heldOutPrompts,
} from './held-out-evaluation';
export { type InitialModel, initialModel } from './initial-model';
export { loadTaskBackbone } from './load-task-backbone';
export { loadTaskModel, type TaskModel } from './load-task-model';
export {
  parseTaskModelManifest,
  TASK_MODEL_FILE,
  TASK_MODEL_FORMAT,
  TASK_MODEL_VERSION,
  type TaskModelEvaluation,
  type TaskModelInit,
  type TaskModelManifest,
  type TaskModelTraining,
} from './manifest';
export {
  DEFAULT_MODEL_SIZE,
  type ModelSize,
  resolveModelSize,
  taskModelConfig,
} from './model-size';
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
export { shellQuote } from './shell-quote';
export { formatTaskOptionFlag, parseTaskOptionFlag } from './task-option-flag';
export { taskSequence } from './task-sequence';
export { checkTaskTokenizer } from './task-tokenizer-check';
export { type TextWindowBatchesOptions, textWindowBatches } from './text-window-batches';
export { isTrainingSeed, TRAINING_SEED_OFFSET, trainingSeed } from './training-seed';
export { guardTrainingState, TRAINING_STATE_SETTINGS_FILE } from './training-state-guard';
