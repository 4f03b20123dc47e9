/**
 * `@lethe/task-models`: tiny task models — the task-model directory format (`lethe-model.json`
 * beside `config.json`, `model.safetensors`, `tokenizer.json`), reading a task model through
 * `ModelFiles` (over HTTP or from picked files: `readTaskModelFiles`), model sizes, and the
 * training data of tasks (generation batches with held-out prompts excluded, text windows, the
 * training seeds); browser-safe. Pretraining, the `lethe pretrain` flags and loading a task model
 * from a directory on disk are in `@lethe/task-models/node`.
 *
 * @packageDocumentation
 */
export {
  type GenerationBatchesOptions,
  generationBatches,
  REPLACEMENT_STRIDE,
} from './generation-batches';
export { LOSS_CURVE_EVERY, lossCurve, withLoss } from './loss-curve';
export {
  parseTaskModelManifest,
  TASK_MODEL_FILE,
  TASK_MODEL_FORMAT,
  TASK_MODEL_VERSION,
  type TaskModelEvaluation,
  type TaskModelInit,
  type TaskModelLossCurve,
  type TaskModelManifest,
  type TaskModelProbe,
  type TaskModelProbes,
  type TaskModelTraining,
} from './manifest';
export {
  DEFAULT_MODEL_SIZE,
  type ModelSize,
  resolveModelSize,
  taskModelConfig,
} from './model-size';
export { readTaskModelFiles, type TaskModel, type TaskTokenizer } from './read-task-model-files';
export { shellQuote } from './shell-quote';
export {
  formatTaskOptionFlag,
  parseTaskOptionFlag,
  parseTaskOptionsFlag,
} from './task-option-flag';
export { type LossOn, taskSequence } from './task-sequence';
export { taskVariant } from './task-variant';
export { type TextWindowBatchesOptions, textWindowBatches } from './text-window-batches';
export { isTrainingSeed, TRAINING_SEED_OFFSET, trainingSeed } from './training-seed';
