/**
 * `@lethe/policies-ngc/train`: end-to-end NGC training — rollouts with sampled evictions, replay
 * masks, the joint token + eviction policy gradient (eq. 3–5) with Dr. GRPO, the staircase
 * curriculum, the min-length penalty and a resumable trainer — and the differentiable tfjs forms
 * of the block logits ({@link blockLogitsTensor}) and of eq. 2 ({@link gumbelTopKLogProbTensor});
 * for interoception (§5.3), the tokenizer that reads the rate tag ({@link interoceptionTokenizer})
 * and a supervised warm-up on tagged prompts before RL ({@link sftWarmup}). Needs the optional
 * peer dependencies `@lethe/model`, `@lethe/rl-grpo` and `@lethe/tensor`.
 *
 * @packageDocumentation
 */
export { blockLogitsTensor } from './block-logits-tensor';
export {
  type CollectRolloutsOptions,
  collectRollouts,
  type RolloutRequest,
} from './collect-rollouts';
export {
  DEFAULT_CURRICULUM_BLEND,
  evictionRateAt,
  retentionAt,
  type StaircaseCurriculum,
  validateCurriculum,
} from './curriculum';
export {
  type GroupBatch,
  type GroupBatchOptions,
  groupRequests,
  type RolloutFunction,
  sampleGroupBatch,
} from './group-batch';
export { type GumbelRound, gumbelTopKLogProbTensor } from './gumbel-top-k-tensor';
export { interoceptionTokenizer } from './interoception-tokenizer';
export {
  type LearnerUpdate,
  type LearnerUpdateOptions,
  learnerUpdate,
  type NgcVariant,
} from './learner-update';
export { type LossGradients, lossGradients } from './loss-gradients';
export { type NgcLossParts, ngcLoss } from './ngc-loss';
export type { NgcTask } from './ngc-task';
export {
  NGC_CHECKPOINT_FORMAT,
  NGC_CHECKPOINT_VERSION,
  type NgcProgress,
  type NgcRolloutSettings,
  type NgcStepMetrics,
  NgcTrainer,
  type NgcTrainerOptions,
  type NgcTrainResult,
} from './ngc-trainer';
export {
  type LayerRounds,
  type ReplayBatch,
  type ReplayBatchOptions,
  replayBatch,
} from './replay-batch';
export { type ReplayLogProbs, type ReplayScoring, replayLogProbs } from './replay-forward';
export { evictedAtFromRounds, writeReplayMask } from './replay-visibility';
export { applyMinLengthPenalty } from './reward';
export { type EvictionRoundRecord, type NgcRollout, replayLength } from './rollout';
export { SFT_WARMUP_BATCH, SFT_WARMUP_LR, type SftWarmupOptions, sftWarmup } from './sft-warmup';
export {
  SFT_WARMUP_INDEX_OFFSET,
  SFT_WARMUP_REPLACEMENT_STRIDE,
  type SftWarmupInteroception,
  type SftWarmupTask,
  warmupTask,
} from './sft-warmup-task';
export { TagMarkupTokenizer } from './tag-markup-tokenizer';
