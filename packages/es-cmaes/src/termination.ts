import { assertInteger, LetheError } from '@lethe/core';
import type { CovarianceModel } from './covariance';
import {
  decodeArray,
  decodeNumber,
  decodeObject,
  encodeArray,
  encodeNumber,
  type JsonNumber,
} from './json';

/**
 * Why a CMA-ES run stopped (several may hold at once), as named by Hansen's tutorial (B.3) and
 * pycma:
 *
 * - `ftarget`: the best f so far is ≤ `stopping.ftarget`.
 * - `maxfevals`: the run used `stopping.maxEvaluations` evaluations.
 * - `maxiter`: the run did `stopping.maxIterations` generations.
 * - `tolfun`: the best f of the last 10 + ⌈30n/λ⌉ generations and all f of the latest one lie
 *   within a range < `stopping.tolFun`.
 * - `tolfunhist`: the best f of the last 10 + ⌈30n/λ⌉ generations lie within a range
 *   < `stopping.tolFunHist`.
 * - `tolx`: σ·√c_ii < `stopping.tolX` and σ·|p_c,i| < `stopping.tolX` for every coordinate i.
 * - `tolupsigma`: σ/σ₀ > `stopping.tolUpSigma` · max D (σ grew while C shrank: no progress).
 * - `conditioncov`: the condition number of C exceeds `stopping.conditionCov`.
 * - `noeffectaxis`: adding 0.1 standard deviations along principal axis i = g mod n does not
 *   change the mean (in floating point).
 * - `noeffectcoord`: adding 0.2 standard deviations in some coordinate does not change the
 *   mean.
 * - `stagnation`: over the last 20 % of generations (at least 120 + 30n/λ, at most 20 000), the
 *   median of the most recent 30 % of the best and of the median f of each generation is not
 *   better than the median of the first 30 %.
 */
export type StopReason =
  | 'ftarget'
  | 'maxfevals'
  | 'maxiter'
  | 'tolfun'
  | 'tolfunhist'
  | 'tolx'
  | 'tolupsigma'
  | 'conditioncov'
  | 'noeffectaxis'
  | 'noeffectcoord'
  | 'stagnation';

/** Every {@link StopReason} (to check a saved state's). */
export const STOP_REASONS: ReadonlySet<string> = new Set<StopReason>([
  'ftarget',
  'maxfevals',
  'maxiter',
  'tolfun',
  'tolfunhist',
  'tolx',
  'tolupsigma',
  'conditioncov',
  'noeffectaxis',
  'noeffectcoord',
  'stagnation',
]);

/** The stopping criteria of a run; each may be tuned, and each has a default. */
export interface StoppingOptions {
  /** Stop when the best f is ≤ this. Default −Infinity (off). */
  readonly ftarget?: number;
  /** Evaluations budget of the run. Default Infinity. */
  readonly maxEvaluations?: number;
  /** Generations budget of the run. Default 100 + 150 (n + 3)² / √λ (pycma's). */
  readonly maxIterations?: number;
  /** `tolfun` threshold. Default 10⁻¹² (the tutorial's); 0 turns it off. */
  readonly tolFun?: number;
  /** `tolfunhist` threshold. Default 10⁻¹²; 0 turns it off. */
  readonly tolFunHist?: number;
  /** `tolx` threshold. Default 10⁻¹² σ₀ (the tutorial's); 0 turns it off. */
  readonly tolX?: number;
  /** `tolupsigma` threshold. Default 10²⁰; Infinity turns it off. */
  readonly tolUpSigma?: number;
  /** `conditioncov` threshold. Default 10¹⁴; Infinity turns it off. */
  readonly conditionCov?: number;
  /** Check `noeffectaxis`. Default true. */
  readonly noEffectAxis?: boolean;
  /** Check `noeffectcoord`. Default true. */
  readonly noEffectCoord?: boolean;
  /** Check `stagnation`. Default true. */
  readonly stagnation?: boolean;
}

/** {@link StoppingOptions} with every default filled in. */
export type ResolvedStopping = {
  readonly [K in keyof StoppingOptions]-?: NonNullable<StoppingOptions[K]>;
};

/**
 * Fills in the defaults of {@link StoppingOptions}.
 *
 * @throws LetheError `E_ARG` naming `stopping.<field>` for a value out of range (thresholds and
 * budgets must be ≥ 0; `maxIterations` / `maxEvaluations` integers or Infinity; `ftarget` not
 * NaN).
 */
export function resolveStopping(
  stopping: StoppingOptions | undefined,
  dimension: number,
  populationSize: number,
  sigma0: number,
): ResolvedStopping {
  const s = stopping ?? {};
  const nonNegative = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (!(value >= 0)) {
      throw new LetheError('E_ARG', `must be ≥ 0, got ${value}`, `stopping.${name}`);
    }
    return value;
  };
  const budget = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (value === Number.POSITIVE_INFINITY) return value;
    return assertInteger(value, `stopping.${name}`, 0);
  };
  const flag = (value: boolean | undefined, name: string): boolean => {
    if (value === undefined) return true;
    if (typeof value !== 'boolean') {
      throw new LetheError('E_ARG', `must be a boolean, got ${String(value)}`, `stopping.${name}`);
    }
    return value;
  };
  if (s.ftarget !== undefined && Number.isNaN(s.ftarget)) {
    throw new LetheError('E_ARG', 'must not be NaN', 'stopping.ftarget');
  }
  const n = dimension;
  return {
    ftarget: s.ftarget ?? Number.NEGATIVE_INFINITY,
    maxEvaluations: budget(s.maxEvaluations, Number.POSITIVE_INFINITY, 'maxEvaluations'),
    maxIterations: budget(
      s.maxIterations,
      Math.floor(100 + (150 * (n + 3) ** 2) / Math.sqrt(populationSize)),
      'maxIterations',
    ),
    tolFun: nonNegative(s.tolFun, 1e-12, 'tolFun'),
    tolFunHist: nonNegative(s.tolFunHist, 1e-12, 'tolFunHist'),
    tolX: nonNegative(s.tolX, 1e-12 * sigma0, 'tolX'),
    tolUpSigma: nonNegative(s.tolUpSigma, 1e20, 'tolUpSigma'),
    conditionCov: nonNegative(s.conditionCov, 1e14, 'conditionCov'),
    noEffectAxis: flag(s.noEffectAxis, 'noEffectAxis'),
    noEffectCoord: flag(s.noEffectCoord, 'noEffectCoord'),
    stagnation: flag(s.stagnation, 'stagnation'),
  };
}

/** What {@link TerminationTracker.check} looks at after a generation. */
export interface TerminationSnapshot {
  /** Completed generations g. */
  readonly generation: number;
  /** Evaluations of the run. */
  readonly evaluations: number;
  /** Best f of the run. */
  readonly bestF: number;
  /** The generation's f, sorted best first (NaN last). */
  readonly sortedFitness: Float64Array;
  readonly mean: Float64Array;
  readonly sigma: number;
  readonly sigma0: number;
  readonly pc: Float64Array;
  readonly model: CovarianceModel;
}

/** Plain-JSON state of a {@link TerminationTracker}. */
export interface TerminationState {
  readonly bestHistory: JsonNumber[];
  readonly stagnationBest: JsonNumber[];
  readonly stagnationMedian: JsonNumber[];
}

/** The histories of f that `tolfun`, `tolfunhist` and `stagnation` need, and the checks. */
export class TerminationTracker {
  /** 10 + ⌈30n/λ⌉: generations in the `tolfun` / `tolfunhist` window. */
  readonly window: number;
  /** ⌈120 + 30n/λ⌉: the shortest `stagnation` history. */
  readonly stagnationMin: number;
  private bestHistory: number[] = [];
  private stagnationBest: number[] = [];
  private stagnationMedian: number[] = [];

  constructor(
    private readonly dimension: number,
    populationSize: number,
    private readonly options: ResolvedStopping,
  ) {
    this.window = 10 + Math.ceil((30 * dimension) / populationSize);
    this.stagnationMin = Math.ceil(120 + (30 * dimension) / populationSize);
  }

  /**
   * Restores the histories from {@link TerminationTracker.toJSON}, saved after `generation`
   * generations.
   *
   * @throws LetheError `E_FORMAT` naming `field.<history>` (malformed, longer than the run
   * keeps it, or a NaN best value) or `field` (the two stagnation histories differ in length).
   */
  restore(state: unknown, field: string, generation: number): void {
    const s = decodeObject(state, field);
    const history = (key: keyof TerminationState, longest: number, nan: boolean): number[] => {
      const values = decodeArray(s[key], `${field}.${key}`);
      if (values.length > longest) {
        throw new LetheError(
          'E_FORMAT',
          `${values.length} entries, at most ${longest} after ${generation} generations`,
          `${field}.${key}`,
        );
      }
      const i = nan ? -1 : values.findIndex(Number.isNaN);
      if (i >= 0)
        throw new LetheError('E_FORMAT', 'a best f is never NaN', `${field}.${key}[${i}]`);
      return Array.from(values);
    };
    const kept = Math.min(generation, this.stagnationLength(generation));
    this.bestHistory = history('bestHistory', Math.min(generation, this.window), false);
    this.stagnationBest = history('stagnationBest', kept, false);
    this.stagnationMedian = history('stagnationMedian', kept, true);
    if (this.stagnationBest.length !== this.stagnationMedian.length) {
      throw new LetheError('E_FORMAT', 'histories of different lengths', field);
    }
  }

  /** How many generations of the stagnation histories are kept after `generation`. */
  private stagnationLength(generation: number): number {
    return Math.min(20000, Math.max(this.stagnationMin, Math.ceil(0.2 * generation)));
  }

  toJSON(): TerminationState {
    return {
      bestHistory: encodeArray(this.bestHistory),
      stagnationBest: encodeArray(this.stagnationBest),
      stagnationMedian: encodeArray(this.stagnationMedian),
    };
  }

  /** Records a finished generation and returns every criterion that holds now. */
  check(s: TerminationSnapshot): StopReason[] {
    const o = this.options;
    const lambda = s.sortedFitness.length;
    const best = s.sortedFitness[0]!;
    const median = s.sortedFitness[Math.floor(lambda / 2)]!;
    this.bestHistory.push(best);
    if (this.bestHistory.length > this.window) this.bestHistory.shift();
    this.stagnationBest.push(best);
    this.stagnationMedian.push(median);
    const keep = this.stagnationLength(s.generation);
    if (this.stagnationBest.length > keep) {
      this.stagnationBest.splice(0, this.stagnationBest.length - keep);
      this.stagnationMedian.splice(0, this.stagnationMedian.length - keep);
    }

    const reasons: StopReason[] = [];
    if (s.bestF <= o.ftarget) reasons.push('ftarget');
    if (s.evaluations >= o.maxEvaluations) reasons.push('maxfevals');
    if (s.generation >= o.maxIterations) reasons.push('maxiter');
    const full = this.bestHistory.length >= this.window;
    const historyRange = range(this.bestHistory);
    const generationRange = s.sortedFitness[lambda - 1]! - best;
    if (full && historyRange < o.tolFun && generationRange < o.tolFun) reasons.push('tolfun');
    if (full && historyRange < o.tolFunHist) reasons.push('tolfunhist');
    if (this.tolX(s)) reasons.push('tolx');
    const d = s.model.axisLengths;
    let maxD = 0;
    for (const x of d) if (x > maxD) maxD = x;
    if (s.sigma / s.sigma0 > o.tolUpSigma * maxD) reasons.push('tolupsigma');
    if (s.model.condition() > o.conditionCov) reasons.push('conditioncov');
    if (o.noEffectAxis && this.noEffectAxis(s)) reasons.push('noeffectaxis');
    if (o.noEffectCoord && this.noEffectCoord(s)) reasons.push('noeffectcoord');
    if (o.stagnation && this.stagnated()) reasons.push('stagnation');
    return reasons;
  }

  private tolX(s: TerminationSnapshot): boolean {
    const tol = this.options.tolX;
    const variances = s.model.variances();
    for (let i = 0; i < this.dimension; i++) {
      if (!(s.sigma * Math.sqrt(variances[i]!) < tol && s.sigma * Math.abs(s.pc[i]!) < tol)) {
        return false;
      }
    }
    return true;
  }

  private noEffectAxis(s: TerminationSnapshot): boolean {
    const n = this.dimension;
    const axis = new Float64Array(n);
    s.model.principalAxis(s.generation % n, axis);
    for (let k = 0; k < n; k++) {
      const m = s.mean[k]!;
      if (m + 0.1 * s.sigma * axis[k]! !== m) return false;
    }
    return true;
  }

  private noEffectCoord(s: TerminationSnapshot): boolean {
    const variances = s.model.variances();
    for (let i = 0; i < this.dimension; i++) {
      const m = s.mean[i]!;
      if (m + 0.2 * s.sigma * Math.sqrt(variances[i]!) === m) return true;
    }
    return false;
  }

  private stagnated(): boolean {
    const count = this.stagnationBest.length;
    if (count < this.stagnationMin) return false;
    const k = Math.ceil(0.3 * count);
    const notBetter = (values: number[]): boolean =>
      median(values.slice(count - k)) >= median(values.slice(0, k));
    return notBetter(this.stagnationBest) && notBetter(this.stagnationMedian);
  }
}

function range(values: readonly number[]): number {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (Number.isNaN(v)) return Number.NaN;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return max - min;
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const m = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}

/** Encodes {@link ResolvedStopping} for a JSON state. */
export function encodeStopping(
  s: ResolvedStopping,
): Record<keyof ResolvedStopping, JsonNumber | boolean> {
  return {
    ftarget: encodeNumber(s.ftarget),
    maxEvaluations: encodeNumber(s.maxEvaluations),
    maxIterations: encodeNumber(s.maxIterations),
    tolFun: encodeNumber(s.tolFun),
    tolFunHist: encodeNumber(s.tolFunHist),
    tolX: encodeNumber(s.tolX),
    tolUpSigma: encodeNumber(s.tolUpSigma),
    conditionCov: encodeNumber(s.conditionCov),
    noEffectAxis: s.noEffectAxis,
    noEffectCoord: s.noEffectCoord,
    stagnation: s.stagnation,
  };
}

/**
 * Decodes {@link encodeStopping}'s output.
 *
 * @throws LetheError `E_FORMAT` naming the field.
 */
export function decodeStopping(value: unknown, field: string): ResolvedStopping {
  const s = decodeObject(value, field);
  const num = (key: string): number => decodeNumber(s[key], `${field}.${key}`);
  const bool = (key: string): boolean => {
    if (typeof s[key] !== 'boolean')
      throw new LetheError('E_FORMAT', 'not a boolean', `${field}.${key}`);
    return s[key] as boolean;
  };
  return {
    ftarget: num('ftarget'),
    maxEvaluations: num('maxEvaluations'),
    maxIterations: num('maxIterations'),
    tolFun: num('tolFun'),
    tolFunHist: num('tolFunHist'),
    tolX: num('tolX'),
    tolUpSigma: num('tolUpSigma'),
    conditionCov: num('conditionCov'),
    noEffectAxis: bool('noEffectAxis'),
    noEffectCoord: bool('noEffectCoord'),
    stagnation: bool('stagnation'),
  };
}
