/**
 * `@lethe/rl-grpo`: group-relative policy optimisation on tfjs, usable without the rest of
 * Lethe — outcome advantages (GRPO, Dr. GRPO), SOL's process-level advantages, the PPO-clipped
 * policy loss with entropy bonus and KL penalty, AdamW with global-norm clipping (from
 * `@lethe/tensor`), and the rollout/learner split (policy snapshots, rollout runners). Rollouts
 * on worker threads are in `@lethe/rl-grpo/node`.
 *
 * @packageDocumentation
 */
export {
  AdamW,
  type AdamWOptions,
  type AdamWState,
  type ClippedGradients,
  clipByGlobalNorm,
  globalNorm,
} from '@lethe/tensor';
export {
  type GroupAdvantageOptions,
  type GroupNormalization,
  groupAdvantages,
  processAdvantages,
} from './advantages';
export {
  type LossAggregation,
  type PolicyLossInputs,
  type PolicyLossOptions,
  policyLoss,
} from './policy-loss';
export * from './rollout/index';
