// Browser-safe: nothing here imports Node modules. File-backed checkpoints live in './node'.

export { AdamW, type AdamWOptions, type AdamWState } from './adamw';
export {
  type BatchProvider,
  type SampledBatchesOptions,
  sampledBatches,
  type TrainBatch,
} from './batch-provider';
export {
  decodeSftCheckpoint,
  encodeSftCheckpoint,
  SFT_CHECKPOINT_FORMAT,
  SFT_CHECKPOINT_VERSION,
  type SftCheckpoint,
} from './checkpoint';
export type { CheckpointStore } from './checkpoint-store';
export { type ClippedGradients, clipByGlobalNorm, globalNorm } from './clip';
export { crossEntropyLoss } from './cross-entropy';
export {
  type NextTokenBatch,
  type NextTokenBatchOptions,
  nextTokenBatch,
  type SftExample,
  validateExamples,
} from './next-token-batch';
export { isNormOrBias } from './no-decay';
export type { TrainProgress } from './progress';
export {
  constantSchedule,
  type LrSchedule,
  type WarmupDecayOptions,
  warmupCosineSchedule,
  warmupLinearSchedule,
} from './schedule';
export {
  SftTrainer,
  type SftTrainerOptions,
  type Trainable,
  type TrainResult,
} from './sft-trainer';
