/**
 * `@lethe/rl-grpo`: group-relative policy optimisation on tfjs, usable without the rest of
 * Lethe — outcome advantages (GRPO, Dr. GRPO), SOL's process-level advantages, and the
 * PPO-clipped policy loss with entropy bonus and KL penalty.
 *
 * @packageDocumentation
 */
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
