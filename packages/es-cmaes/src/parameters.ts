import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';

/**
 * Every constant of CMA-ES in one place: the default strategy parameters of Hansen, "The CMA
 * Evolution Strategy: A Tutorial" (arXiv:1604.00772, 2016, revised 2023), Table 1 and eqs.
 * (44)–(55), with the separable variant's learning rates of Ros & Hansen, "A Simple
 * Modification in CMA-ES Achieving Linear Time and Space Complexity" (PPSN 2008).
 *
 * Names follow the tutorial: `lambda` λ, `mu` μ, `muEff` μ_eff, `cc` c_c, `cs` c_σ, `c1` c_1,
 * `cmu` c_μ, `damps` d_σ, `cm` c_m, `chiN` E‖N(0, I)‖.
 *
 * @packageDocumentation
 */

/** α_cov of Table 1: the numerator of c_1 and c_μ. */
export const ALPHA_COV = 2;

/** Which variant the parameters are for. */
export interface StrategyParameterOptions {
  /** λ, the number of samples per generation, an integer ≥ 2 (default 4 + ⌊3 ln n⌋). */
  readonly populationSize?: number;
  /** Separable CMA-ES (diagonal covariance): c_1 and c_μ scaled by (n + 2)/3. Default false. */
  readonly diagonal?: boolean;
  /** Active CMA: negative recombination weights for the worst λ − μ samples. Default true. */
  readonly active?: boolean;
  /** c_m, the learning rate of the mean, in (0, 1]. Default 1. */
  readonly cm?: number;
}

/** The strategy parameters of one CMA-ES run (immutable). */
export interface StrategyParameters {
  /** n, the search space dimension. */
  readonly dimension: number;
  /** λ: samples per generation. */
  readonly lambda: number;
  /** μ = ⌊λ/2⌋: the number of positive recombination weights. */
  readonly mu: number;
  /** w'_i = ln((λ+1)/2) − ln i, i = 1 … λ: the raw weights (eq. 49). */
  readonly rawWeights: Float64Array;
  /**
   * w_i (eq. 53): positive part normalised to sum 1; negative part scaled so that its sum is
   * −min(α_μ^-, α_μeff^-, α_posdef^-) (all zero when `active` is false).
   */
  readonly weights: Float64Array;
  /** μ_eff = (Σ_{i≤μ} w'_i)² / Σ_{i≤μ} w'_i² (eq. 50), in [1, μ]. */
  readonly muEff: number;
  /** μ_eff^- = (Σ_{i>μ} w'_i)² / Σ_{i>μ} w'_i² (eq. 51). */
  readonly muEffMinus: number;
  /** c_c = (4 + μ_eff/n) / (n + 4 + 2μ_eff/n) (eq. 56): learning rate of the path p_c. */
  readonly cc: number;
  /** c_σ = (μ_eff + 2) / (n + μ_eff + 5) (eq. 55): learning rate of the path p_σ. */
  readonly cs: number;
  /**
   * c_1 = α_cov / ((n + 1.3)² + μ_eff) (eq. 57): rank-one learning rate; × (n + 2)/3 for the
   * separable variant.
   */
  readonly c1: number;
  /**
   * c_μ = min(1 − c_1, α_cov (1/4 + μ_eff + 1/μ_eff − 2) / ((n + 2)² + α_cov μ_eff / 2))
   * (eq. 58, 2023 revision): rank-μ learning rate; separable: min(1 − c_1, c_μ (n + 2)/3).
   */
  readonly cmu: number;
  /** d_σ = 1 + 2 max(0, √((μ_eff − 1)/(n + 1)) − 1) + c_σ (eq. 55): step-size damping. */
  readonly damps: number;
  /** c_m: learning rate of the mean (eq. 54, default 1). */
  readonly cm: number;
  /** E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²)). */
  readonly chiN: number;
  /** α_μ^- = 1 + c_1/c_μ (eq. 50). */
  readonly alphaMuMinus: number;
  /** α_μeff^- = 1 + 2μ_eff^- / (μ_eff + 2) (eq. 51). */
  readonly alphaMuEffMinus: number;
  /** α_posdef^- = (1 − c_1 − c_μ) / (n c_μ) (eq. 52). */
  readonly alphaPosDefMinus: number;
  /** 1.4 + 2/(n + 1): the h_σ threshold factor on E‖N(0, I)‖ (below eq. 45). */
  readonly hsigThreshold: number;
  /**
   * Generations between eigendecompositions of C: max(1, ⌊1 / (10 n (c_1 + c_μ))⌋) (tutorial,
   * B.2, "lazy" update: O(n²) per sample on average). Always 1 for the separable variant.
   */
  readonly eigenInterval: number;
  /**
   * √n + 2n/(n + 2): the longest Mahalanobis step ‖C^{-1/2} y‖ an injected solution may
   * contribute (Hansen, "Injecting External Solutions Into CMA-ES", 2011).
   */
  readonly injectionClip: number;
  /**
   * exp(0.2 + c_σ/d_σ): σ is multiplied by this when the best and the ⌈0.7λ⌉-th f of a
   * generation are equal (a plateau; the tutorial's reference code).
   */
  readonly flatFitnessFactor: number;
  /** The variant: separable (diagonal C). */
  readonly diagonal: boolean;
  /** The variant: active (negative weights in the covariance update). */
  readonly active: boolean;
}

/** λ = 4 + ⌊3 ln n⌋, the default population size (Table 1). */
export function defaultPopulationSize(dimension: number): number {
  assertInteger(dimension, 'dimension', 1);
  return 4 + Math.floor(3 * Math.log(dimension));
}

/** E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²)), the expected length of a standard normal vector. */
export function expectedNormalNorm(dimension: number): number {
  const n = dimension;
  return Math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
}

/**
 * The default strategy parameters of CMA-ES for dimension `dimension` (tutorial Table 1).
 *
 * @param dimension n, an integer ≥ 1
 * @throws LetheError `E_ARG` naming `dimension` (not an integer ≥ 1), `populationSize` (not an
 * integer ≥ 2) or `cm` (not in (0, 1]).
 *
 * @example
 * ```ts
 * const p = strategyParameters(10);
 * p.lambda;   // 10
 * p.muEff;    // 3.1672992814107…
 * ```
 */
export function strategyParameters(
  dimension: number,
  options: StrategyParameterOptions = {},
): StrategyParameters {
  const n = assertInteger(dimension, 'dimension', 1);
  const lambda =
    options.populationSize === undefined
      ? defaultPopulationSize(n)
      : assertInteger(options.populationSize, 'populationSize', 2);
  const cm = options.cm === undefined ? 1 : assertFiniteInRange(options.cm, 'cm', 0, 1);
  if (cm === 0) throw new LetheError('E_ARG', 'must be in (0, 1], got 0', 'cm');
  const diagonal = options.diagonal === true;
  const active = options.active !== false;
  const mu = Math.floor(lambda / 2);

  const rawWeights = new Float64Array(lambda);
  for (let i = 0; i < lambda; i++) rawWeights[i] = Math.log((lambda + 1) / 2) - Math.log(i + 1);
  let sumPos = 0;
  let sumPosSq = 0;
  for (let i = 0; i < mu; i++) {
    sumPos += rawWeights[i]!;
    sumPosSq += rawWeights[i]! * rawWeights[i]!;
  }
  let sumNeg = 0;
  let sumNegSq = 0;
  for (let i = mu; i < lambda; i++) {
    sumNeg += rawWeights[i]!;
    sumNegSq += rawWeights[i]! * rawWeights[i]!;
  }
  const muEff = (sumPos * sumPos) / sumPosSq;
  const muEffMinus = (sumNeg * sumNeg) / sumNegSq;

  const cc = (4 + muEff / n) / (n + 4 + (2 * muEff) / n);
  const cs = (muEff + 2) / (n + muEff + 5);
  let c1 = ALPHA_COV / ((n + 1.3) ** 2 + muEff);
  let cmu = Math.min(
    1 - c1,
    (ALPHA_COV * (0.25 + muEff + 1 / muEff - 2)) / ((n + 2) ** 2 + (ALPHA_COV * muEff) / 2),
  );
  if (diagonal) {
    c1 = (c1 * (n + 2)) / 3;
    cmu = Math.min(1 - c1, (cmu * (n + 2)) / 3);
  }
  const damps = 1 + 2 * Math.max(0, Math.sqrt((muEff - 1) / (n + 1)) - 1) + cs;

  const alphaMuMinus = 1 + c1 / cmu;
  const alphaMuEffMinus = 1 + (2 * muEffMinus) / (muEff + 2);
  const alphaPosDefMinus = (1 - c1 - cmu) / (n * cmu);

  // Positive weights sum to 1 (the zero weight of an odd λ counts as positive); negative ones
  // sum to −min(α_μ^-, α_μeff^-, α_posdef^-).
  let positiveTotal = 0;
  let negativeTotal = 0;
  for (const w of rawWeights) {
    if (w >= 0) positiveTotal += w;
    else negativeTotal -= w;
  }
  const negativeScale = active ? Math.min(alphaMuMinus, alphaMuEffMinus, alphaPosDefMinus) : 0;
  const weights = new Float64Array(lambda);
  for (let i = 0; i < lambda; i++) {
    const w = rawWeights[i]!;
    weights[i] =
      w >= 0 ? w / positiveTotal : negativeTotal > 0 ? (negativeScale * w) / negativeTotal : 0;
  }

  const eigenInterval = diagonal ? 1 : Math.max(1, Math.floor(1 / (10 * n * (c1 + cmu))));
  return {
    dimension: n,
    lambda,
    mu,
    rawWeights,
    weights,
    muEff,
    muEffMinus,
    cc,
    cs,
    c1,
    cmu,
    damps,
    cm,
    chiN: expectedNormalNorm(n),
    alphaMuMinus,
    alphaMuEffMinus,
    alphaPosDefMinus,
    hsigThreshold: 1.4 + 2 / (n + 1),
    eigenInterval,
    injectionClip: Math.sqrt(n) + (2 * n) / (n + 2),
    flatFitnessFactor: Math.exp(0.2 + cs / damps),
    diagonal,
    active,
  };
}
