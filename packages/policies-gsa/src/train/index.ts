/**
 * `@lethe/policies-gsa/train`: what the paper's two-stage training of the gates is built from —
 * the gate as trainable variables ({@link GsaGateVariables}, a `Trainable` for `@lethe/model`'s
 * `SftTrainer`, the backbone untouched), stage 1's attention distillation
 * ({@link distillationLoss} over {@link gatedAttention}) and the gate penalty
 * ({@link gatePenalty}, the reference code's or the paper's), and this project's budget-retention
 * term ({@link retentionLoss}), which scores the gate against the caches it will be evicting, and
 * its eviction in the loop ({@link evictionMaskHook}): stage 2's loss through those caches.
 *
 * @packageDocumentation
 */
export { GsaGate } from '../gate/gsa-gate';
export { distillationLoss } from './distillation-loss';
export { type EvictionLayout, evictionBoundaries } from './eviction-boundaries';
export { type EvictionAnchors, evictionMaskHook, evictionVisibility } from './eviction-mask';
export {
  type EvictionInLoopOptions,
  type ResolvedEviction,
  resolveEviction,
  sampledBudgets,
} from './eviction-options';
export {
  type GatePenaltyKind,
  type GatePenaltyOptions,
  gatePenalty,
  type ResolvedGatePenalty,
  resolvePenalty,
} from './gate-penalty';
export { type GateStatistics, gateStatisticsTensor, HIGH_GATE, LOW_GATE } from './gate-statistics';
export { GsaGateVariables } from './gate-variables';
export { gatedAttention } from './gated-attention';
export { type GsaProgress, GsaTrainer, type GsaTrainerOptions } from './gsa-trainer';
export {
  DEFAULT_ATTENTION_WEIGHT,
  DEFAULT_GATE_WEIGHT,
  type GsaLossWeights,
  type ResolvedLossWeights,
  resolveLossWeights,
} from './loss-weights';
export { type RetentionTerms, retentionLoss } from './retention-loss';
export {
  DEFAULT_RETENTION_BUDGETS,
  type ResolvedRetention,
  type RetentionOptions,
  resolveRetention,
} from './retention-options';
export {
  distillationTerms,
  type GsaStage,
  languageModelTerms,
  type StageTerms,
} from './stage-terms';
export { type DistillationBatch, type TeacherCapture, withTeacher } from './teacher-batches';
