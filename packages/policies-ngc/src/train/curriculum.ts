import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';

/** NGC's staircase retention curriculum (§4.6, eq. 6). */
export interface StaircaseCurriculum {
  /** Retention rates ρ_0 ≥ ρ_1 ≥ … ≥ ρ_K, each in [0, 1] (1 = no eviction, ε = 1 − ρ). */
  readonly retention: readonly number[];
  /** Training steps per stage Δ (a positive integer). */
  readonly stageSteps: number;
  /** Final fraction α ∈ (0, 1) of each stage that blends linearly toward the next level (paper: 0.6). */
  readonly blend: number;
}

/** The paper's blend fraction α. */
export const DEFAULT_CURRICULUM_BLEND = 0.6;

/**
 * Throws `E_ARG` naming the field unless `curriculum` is valid: a non-empty, non-increasing list
 * of retention rates in [0, 1], a positive integer stage length and α in (0, 1).
 */
export function validateCurriculum(curriculum: StaircaseCurriculum): StaircaseCurriculum {
  const { retention, stageSteps, blend } = curriculum;
  if (!Array.isArray(retention) || retention.length === 0) {
    throw new LetheError('E_ARG', 'must list at least one retention rate', 'curriculum.retention');
  }
  retention.forEach((rho, i) => {
    assertFiniteInRange(rho, `curriculum.retention[${i}]`, 0, 1);
    if (i > 0 && rho > retention[i - 1]!) {
      throw new LetheError(
        'E_ARG',
        `must not exceed the previous rate ${retention[i - 1]}, got ${rho}`,
        `curriculum.retention[${i}]`,
      );
    }
  });
  assertInteger(stageSteps, 'curriculum.stageSteps', 1);
  if (!(blend > 0 && blend < 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1), got ${blend}`, 'curriculum.blend');
  }
  return curriculum;
}

/**
 * Retention rate ρ(t) at training step `t` (eq. 6): stage ℓ = min(⌊t/Δ⌋, K); within a stage
 * ρ_ℓ holds for the first 1 − α of it, then blends linearly toward ρ_{ℓ+1}; the last stage holds
 * ρ_K.
 */
export function retentionAt(curriculum: StaircaseCurriculum, step: number): number {
  validateCurriculum(curriculum);
  assertInteger(step, 'step', 0);
  const { retention, stageSteps, blend } = curriculum;
  const last = retention.length - 1;
  const stage = Math.min(Math.floor(step / stageSteps), last);
  if (stage === last) return retention[last]!;
  const progress = (step % stageSteps) / stageSteps;
  if (progress < 1 - blend) return retention[stage]!;
  const share = (progress - (1 - blend)) / blend;
  return retention[stage]! + share * (retention[stage + 1]! - retention[stage]!);
}

/** Eviction rate ε(t) = 1 − ρ(t) (0 means no eviction). */
export function evictionRateAt(curriculum: StaircaseCurriculum, step: number): number {
  return 1 - retentionAt(curriculum, step);
}
