import { assertFiniteInRange } from '@lethe/core';
import { type GatePenaltyOptions, type ResolvedGatePenalty, resolvePenalty } from './gate-penalty';
import {
  type ResolvedRetention,
  type RetentionOptions,
  resolveRetention,
} from './retention-options';

/** `λ_gate` unless told otherwise: the public Octopus code's gate-loss weight. */
export const DEFAULT_GATE_WEIGHT = 0.5;
/** `λ_attn` unless told otherwise: the public Octopus code adds the plain MSE (weight 1). */
export const DEFAULT_ATTENTION_WEIGHT = 1;

/**
 * The weights of a stage's terms: `L = λ · L_task + λ_gate · L_gate`, plus `λ_ret · L_ret` when
 * `retentionWeight` is above 0 (this project's budget-retention term, not the paper's).
 */
export interface GsaLossWeights {
  /** `λ_attn`, stage 1's weight of `L_attn` (≥ 0; default {@link DEFAULT_ATTENTION_WEIGHT}). */
  readonly attentionWeight?: number;
  /** `λ_gate`, both stages' weight of `L_gate` (≥ 0; default {@link DEFAULT_GATE_WEIGHT}). */
  readonly gateWeight?: number;
  /** Which gate penalty, and `λ_ent` for the paper's (default: the reference code's). */
  readonly penalty?: GatePenaltyOptions;
  /**
   * `λ_ret`, both stages' weight of the budget-retention term `L_ret` (`retentionLoss`; ≥ 0;
   * default 0: the paper's recipe, without it).
   */
  readonly retentionWeight?: number;
  /** The budgeted caches `L_ret` scores against (defaults: `resolveRetention`'s). */
  readonly retention?: RetentionOptions;
}

/** {@link GsaLossWeights} with defaults filled in. */
export interface ResolvedLossWeights {
  readonly attentionWeight: number;
  readonly gateWeight: number;
  readonly penalty: ResolvedGatePenalty;
  readonly retentionWeight: number;
  readonly retention: ResolvedRetention;
}

/**
 * Fills in the defaults and checks the weights.
 *
 * @throws LetheError `E_ARG` naming `attentionWeight`, `gateWeight` or `retentionWeight` for a
 *   negative or non-finite weight, `options.kind` or `options.entropyWeight` for a bad penalty,
 *   `retention.*` as `resolveRetention`.
 */
export function resolveLossWeights(weights: GsaLossWeights): ResolvedLossWeights {
  return {
    attentionWeight: assertFiniteInRange(
      weights.attentionWeight ?? DEFAULT_ATTENTION_WEIGHT,
      'attentionWeight',
      0,
    ),
    gateWeight: assertFiniteInRange(weights.gateWeight ?? DEFAULT_GATE_WEIGHT, 'gateWeight', 0),
    penalty: resolvePenalty(weights.penalty ?? {}),
    retentionWeight: assertFiniteInRange(weights.retentionWeight ?? 0, 'retentionWeight', 0),
    retention: resolveRetention(weights.retention),
  };
}
