// Browser-safe: nothing here imports Node modules. File-backed checkpoints live in './node'.

// The optimiser and gradient clipping live in @lethe/tensor (shared with @lethe/rl-grpo); they
// stay exported here so code importing them from @lethe/model keeps working.
export {
  AdamW,
  type AdamWOptions,
  type AdamWState,
  type ClippedGradients,
  clipByGlobalNorm,
  globalNorm,
} from '@lethe/tensor';
export {
  applyMerges,
  type BpeModel,
  type BpeTrainingOptions,
  trainBpe,
} from '../tokenizer/bpe/bpe';
export {
  type BpeTokenizerJsonOptions,
  bpeTokenizerJson,
} from '../tokenizer/bpe/bpe-tokenizer-json';
export {
  LLAMA3_PATTERN,
  preTokenize,
  QWEN2_PATTERN,
  type SplitPattern,
} from '../tokenizer/bpe/split-pattern';
export {
  type BatchProvider,
  type SampledBatchesOptions,
  sampledBatches,
  type TrainBatch,
} from './batch-provider';
export {
  type CheckpointFormat,
  decodeSftCheckpoint,
  decodeTrainingCheckpoint,
  encodeSftCheckpoint,
  encodeTrainingCheckpoint,
  SFT_CHECKPOINT_FORMAT,
  SFT_CHECKPOINT_VERSION,
  type SftCheckpoint,
  type TrainingCheckpoint,
} from './checkpoint';
export type { CheckpointStore } from './checkpoint-store';
export { crossEntropyLoss } from './cross-entropy';
export {
  type MicroBatch,
  type MicroBatching,
  nextTokenMicroBatches,
} from './micro-batches';
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
