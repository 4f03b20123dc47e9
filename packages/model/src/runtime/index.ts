export type {
  BatchFinishReason,
  BatchHandlers,
  BatchRequest,
  BatchResult,
  BatchTokenEvent,
  PromptTokenEvent,
  SequenceCacheReport,
} from './batch-request';
export type { CacheReads } from './cache-options';
export { CapacityError } from './capacity-error';
export type { ComputeUsage } from './compute-usage';
export {
  type BatcherOptions,
  type BatcherStats,
  ContinuousBatcher,
} from './continuous-batcher';
export { defaultCache, releaseCache } from './default-cache';
export type { EvictionRound } from './eviction-rounds';
export {
  type ForceTokenEvent,
  type GenerateOptions,
  type GenerationResult,
  generate,
  type StepEvent,
  type TokenEvent,
} from './generate';
export { collectStats, type DecodeReads, type GenerationStats } from './generation-stats';
export { policyContextOf } from './policy-context';
export type { Prompt } from './prompts';
export {
  logProbOf,
  type SampledToken,
  type SamplingOptions,
  sampleToken,
  validateSampling,
} from './sampling';
export {
  type EvictionRoundEvent,
  GenerationSession,
  type PrefillChunkEvent,
  type SessionOptions,
  type StepOutput,
} from './session';
export {
  type FinishReason,
  type StopConditions,
  stopReason,
  validateStop,
} from './stop-conditions';
export { StopMatcher, type StopScan } from './stop-matcher';
export { type PositionLogProbs, type TokenLogProb, tokenLogProbs } from './token-log-probs';
