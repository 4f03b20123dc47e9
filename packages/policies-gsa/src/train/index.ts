/**
 * `@lethe/policies-gsa/train`: what the paper's two-stage training of the gates is built from —
 * the gate as trainable variables ({@link GsaGateVariables}, a `Trainable` for `@lethe/model`'s
 * `SftTrainer`, the backbone untouched), stage 1's attention distillation
 * ({@link distillationLoss} over {@link gatedAttention}) and the gate penalty
 * ({@link gatePenalty}, the reference code's or the paper's).
 *
 * @packageDocumentation
 */
export { distillationLoss } from './distillation-loss';
export { type GatePenaltyKind, type GatePenaltyOptions, gatePenalty } from './gate-penalty';
export { GsaGateVariables } from './gate-variables';
export { gatedAttention } from './gated-attention';
