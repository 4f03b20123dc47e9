import { LetheError, type RngState } from '@lethe/core';
import { clipIntoBounds, insideBounds, insideFreeCoordinates, mirrorIntoBounds } from './bounds';
import type { CovarianceModel, CovarianceState } from './covariance';
import { decodeCovariance } from './covariance-state';
import { DiagonalCovariance } from './diagonal-covariance';
import { FullCovariance } from './full-covariance';
import {
  decodeCount,
  decodeFinite,
  decodeFiniteArray,
  decodeNumber,
  decodeObject,
  encodeArray,
  encodeNumber,
  type JsonNumber,
  MAGNITUDE_LIMIT,
} from './json';
import { NormalSampler } from './normal';
import {
  type CMAESConfig,
  type CMAESConfigState,
  type CMAESOptions,
  decodeConfig,
  encodeConfig,
  resolveOptions,
} from './options';
import { type StrategyParameters, strategyParameters } from './parameters';
import { rankFitness } from './ranking';
import {
  STOP_REASONS,
  type StopReason,
  type TerminationState,
  TerminationTracker,
} from './termination';

/**
 * Identifies a {@link CMAESState}; bumped when the layout or the meaning of a field changes.
 * Version 3 adds `config.boundHandling` and `config.maxResamples`; a version-2 state (which
 * always mirrored) is still read and continues bit-identically. Version 1 is refused: it drew
 * its normals by Box–Muller, so its generator state would not continue the run's samples.
 */
export const CMAES_STATE_FORMAT = 'lethe-es-cmaes/3';

/** The previous format, still read (see {@link CMAES_STATE_FORMAT}). */
export const CMAES_STATE_FORMAT_V2 = 'lethe-es-cmaes/2';

/** The best solution a run has seen. */
export interface BestSolution {
  /** The candidate as evaluated (inside the bounds). */
  readonly x: Float64Array;
  /** Its f. */
  readonly f: number;
  /** Which evaluation of the run produced it (1-based). */
  readonly evaluation: number;
}

/** A copy of `best` (callers may keep or change it), or undefined. */
export function copyBest(best: BestSolution | undefined): BestSolution | undefined {
  return best === undefined
    ? undefined
    : { x: best.x.slice(), f: best.f, evaluation: best.evaluation };
}

/**
 * Everything a {@link CMAES} run is, as plain JSON: `JSON.stringify` it after any `tell` (or
 * even between `ask` and `tell`), and {@link CMAES.fromState} continues with bit-identical
 * samples and results. Non-finite numbers and −0 are stored as strings ({@link JsonNumber}).
 */
export interface CMAESState {
  readonly format: typeof CMAES_STATE_FORMAT | typeof CMAES_STATE_FORMAT_V2;
  readonly config: CMAESConfigState;
  /** The Philox generator's state: the next sample depends on nothing else. */
  readonly rng: RngState;
  readonly generation: number;
  readonly evaluations: number;
  /** The mean (unconstrained, before mirroring into the bounds). */
  readonly mean: JsonNumber[];
  readonly sigma: JsonNumber;
  /** The evolution path of σ (conjugate path). */
  readonly ps: JsonNumber[];
  /** The evolution path of C. */
  readonly pc: JsonNumber[];
  readonly covariance: CovarianceState;
  readonly best: {
    readonly x: JsonNumber[];
    readonly f: JsonNumber;
    readonly evaluation: number;
  } | null;
  readonly termination: TerminationState;
  readonly stopReasons: StopReason[];
  /** The standard normal draws of the population asked for and not yet told, λ × n; or null. */
  readonly pendingZ: JsonNumber[] | null;
}

/**
 * CMA-ES (Hansen's tutorial, 2016/2023): one run of the covariance matrix adaptation evolution
 * strategy with active covariance update, optional separable (diagonal) covariance, box bounds
 * by mirroring, and the standard stopping criteria, driven by ask / tell:
 *
 * ```ts
 * const es = new CMAES({ x0: [3, 3, 3], sigma0: 2, seed: 1 });
 * while (!es.stopped) {
 *   const xs = es.ask();
 *   es.tell(xs, xs.map(rosenbrock));
 * }
 * console.log(es.best, es.stopReasons);
 * ```
 *
 * Minimises. f may return +Infinity (ranked with ties) or NaN (ranked last; see
 * {@link rankFitness}). For restarts (IPOP / BIPOP) use {@link RestartCMAES} or
 * {@link optimize}.
 */
export class CMAES {
  /** The strategy parameters (λ, μ, weights, learning rates, …) of this run. */
  readonly parameters: StrategyParameters;
  private cfg: CMAESConfig;
  private sampler: NormalSampler;
  private model: CovarianceModel;
  private readonly m: Float64Array;
  private readonly ps: Float64Array;
  private readonly pc: Float64Array;
  private readonly z: Float64Array;
  private readonly y: Float64Array;
  /** The candidates of the pending population as ask returned them (our copy), λ × n. */
  private readonly x: Float64Array;
  /** 1 for a pending candidate that was clipped into the box after `maxResamples` redraws. */
  private readonly repaired: Uint8Array;
  /** tell's scratch: ⟨y⟩_w, ⟨z⟩_w and B⟨z⟩_w (n each), reused every generation. */
  private readonly yw: Float64Array;
  private readonly zw: Float64Array;
  private readonly whitened: Float64Array;
  private readonly termination: TerminationTracker;
  private sigmaValue: number;
  private generationCount = 0;
  private evaluationCount = 0;
  private bestSolution: BestSolution | undefined;
  private reasons: StopReason[] = [];
  private pending = false;

  /**
   * Starts a run at m = x0, σ = sigma0, C = I.
   *
   * @throws LetheError `E_ARG` / `E_SHAPE` naming the option at fault (see
   * {@link CMAESOptions}); `E_ARG` naming `seed` for a seed that is not a non-negative safe
   * integer or a bigint < 2⁶⁴.
   */
  constructor(options: CMAESOptions) {
    const { config, x0 } = resolveOptions(options);
    const sampler = NormalSampler.fromSeed(options.seed ?? 0);
    this.cfg = config;
    const n = config.dimension;
    this.parameters = strategyParameters(n, {
      populationSize: config.populationSize,
      diagonal: config.diagonal,
      active: config.active,
      cm: config.cm,
    });
    this.sampler = sampler;
    this.model = config.diagonal ? new DiagonalCovariance(n) : new FullCovariance(n);
    this.m = x0;
    this.ps = new Float64Array(n);
    this.pc = new Float64Array(n);
    this.z = new Float64Array(config.populationSize * n);
    this.y = new Float64Array(config.populationSize * n);
    this.x = new Float64Array(config.populationSize * n);
    this.repaired = new Uint8Array(config.populationSize);
    this.yw = new Float64Array(n);
    this.zw = new Float64Array(n);
    this.whitened = new Float64Array(n);
    this.sigmaValue = config.sigma0;
    this.termination = new TerminationTracker(n, config.populationSize, config.stopping);
  }

  /**
   * Continues a run from {@link CMAES.state} (typically after `JSON.parse`): the samples and
   * results that follow are bit-identical to those of the run that saved it. Reads the current
   * format and version 2 ({@link CMAES_STATE_FORMAT}).
   *
   * Besides its layout, every value is checked against what a run keeps true, so that a
   * corrupted state is refused here rather than failing later: σ and the mean finite and within
   * ±10³² (σ > 0; the {@link MAGNITUDE_LIMIT}), the paths finite, C and its factors as
   * `decodeCovariance` requires (finite, D > 0, …), evaluations = λ × generations, the best
   * solution finite, inside the bounds and among the evaluations, the stopping criteria as the
   * constructor checks them, the histories without a NaN best, the pending draws finite.
   *
   * @throws LetheError `E_FORMAT` naming the field of `state` (or the entry, e.g.
   * `state.mean[2]`) that is missing, malformed, out of range, of another format version or
   * inconsistent with the rest.
   */
  static fromState(state: CMAESState): CMAES {
    const s = decodeObject(state, 'state');
    if (s.format !== CMAES_STATE_FORMAT && s.format !== CMAES_STATE_FORMAT_V2) {
      throw new LetheError(
        'E_FORMAT',
        `expected ${CMAES_STATE_FORMAT} or ${CMAES_STATE_FORMAT_V2}, got ${JSON.stringify(s.format)}`,
        'state.format',
      );
    }
    const config = decodeConfig(s.config, 'state.config', s.format === CMAES_STATE_FORMAT_V2);
    const n = config.dimension;
    const lambda = config.populationSize;
    const mean = decodeFiniteArray(s.mean, 'state.mean', n, { magnitude: MAGNITUDE_LIMIT });
    const es = new CMAES({
      x0: mean,
      sigma0: config.sigma0,
      populationSize: lambda,
      diagonal: config.diagonal,
      active: config.active,
      cm: config.cm,
      stopping: config.stopping,
    });
    // The constructor checked x0 against no bounds; restore everything exactly.
    es.cfg = config;
    es.sampler = decodeSampler(s.rng, 'state.rng');
    const generation = decodeCount(s.generation, 'state.generation');
    const evaluations = decodeCount(s.evaluations, 'state.evaluations');
    if (evaluations !== generation * lambda) {
      throw new LetheError(
        'E_FORMAT',
        `${evaluations} evaluations in ${generation} generations of λ = ${lambda}`,
        'state.evaluations',
      );
    }
    es.generationCount = generation;
    es.evaluationCount = evaluations;
    es.sigmaValue = decodeFinite(s.sigma, 'state.sigma', {
      positive: true,
      magnitude: MAGNITUDE_LIMIT,
    });
    es.ps.set(decodeFiniteArray(s.ps, 'state.ps', n));
    es.pc.set(decodeFiniteArray(s.pc, 'state.pc', n));
    es.model = decodeCovariance(s.covariance, config, generation);
    es.bestSolution = decodeBest(s.best, config, evaluations);
    es.termination.restore(s.termination, 'state.termination', generation);
    const reasons = s.stopReasons;
    if (!Array.isArray(reasons) || !reasons.every((r) => STOP_REASONS.has(r))) {
      throw new LetheError('E_FORMAT', 'not an array of stop reasons', 'state.stopReasons');
    }
    es.reasons = reasons as StopReason[];
    if (s.pendingZ !== null) {
      es.z.set(decodeFiniteArray(s.pendingZ, 'state.pendingZ', lambda * n));
      es.materialize(false);
    }
    return es;
  }

  /** The checked options, defaults filled in. */
  get config(): CMAESConfig {
    return this.cfg;
  }

  /** n, the dimension. */
  get dimension(): number {
    return this.config.dimension;
  }

  /** λ, candidates per generation. */
  get populationSize(): number {
    return this.config.populationSize;
  }

  /** Completed generations (tells). */
  get generation(): number {
    return this.generationCount;
  }

  /** Evaluations told so far (λ per tell). */
  get evaluations(): number {
    return this.evaluationCount;
  }

  /** The current step size σ. */
  get sigma(): number {
    return this.sigmaValue;
  }

  /** The distribution mean, mirrored into the bounds when there are bounds (a fresh array). */
  get mean(): Float64Array {
    const b = this.config.bounds;
    return b === undefined
      ? this.m.slice()
      : mirrorIntoBounds(this.m, b, new Float64Array(this.dimension));
  }

  /** The best candidate told so far, or undefined before the first tell. */
  get best(): BestSolution | undefined {
    return copyBest(this.bestSolution);
  }

  /** The stopping criteria that held after the latest tell (empty while the run goes on). */
  get stopReasons(): readonly StopReason[] {
    return this.reasons.slice();
  }

  /** Whether any stopping criterion holds. `ask` still works after it (it is advisory). */
  get stopped(): boolean {
    return this.reasons.length > 0;
  }

  /** Whether a population was asked for and not yet told. */
  get awaitingTell(): boolean {
    return this.pending;
  }

  /** σ·√diag(C): the current standard deviation of every coordinate (a fresh array). */
  standardDeviations(): Float64Array {
    const v = this.model.variances();
    for (let i = 0; i < v.length; i++) v[i] = this.sigmaValue * Math.sqrt(v[i]!);
    return v;
  }

  /** max D / min D: the ratio of the longest to the shortest principal axis of C. */
  get axisRatio(): number {
    return Math.sqrt(this.model.condition());
  }

  /** diag(C) (a fresh array; the distribution's covariance is σ²C). */
  covarianceDiagonal(): Float64Array {
    return this.model.variances();
  }

  /** C, dense row-major n × n (a fresh array; O(n²) memory also for the separable variant). */
  covarianceMatrix(): Float64Array {
    return this.model.matrix();
  }

  /**
   * Samples the next population: λ candidates x_k = m + σ·B·D·z_k, z_k ~ N(0, I), each brought
   * into the bounds as `boundHandling` says (mirrored, or redrawn and at last clipped). Returns
   * fresh arrays the caller may keep or modify.
   *
   * @throws LetheError `E_STATE` when the previous population has not been told yet, or when
   * the run diverged: σ or a coordinate of the mean beyond ±10³² ({@link MAGNITUDE_LIMIT}).
   */
  ask(): Float64Array[] {
    if (this.pending) {
      throw new LetheError('E_STATE', 'ask() called again before tell() for the last population');
    }
    const diverged =
      !(this.sigmaValue <= MAGNITUDE_LIMIT) ||
      this.m.some((v) => !(Math.abs(v) <= MAGNITUDE_LIMIT));
    if (diverged) {
      throw new LetheError(
        'E_STATE',
        `the run diverged (σ = ${this.sigmaValue}, or the mean beyond ±${MAGNITUDE_LIMIT}): start a new one`,
      );
    }
    this.sampler.fill(this.z);
    this.materialize(true);
    const n = this.dimension;
    const candidates: Float64Array[] = [];
    for (let k = 0; k < this.populationSize; k++) {
      candidates.push(this.x.slice(k * n, k * n + n));
    }
    return candidates;
  }

  /**
   * y_k = B·D·z_k and the candidates x_k from the current z; the population is pending. With
   * `resample`, `redraw` lets an out-of-box candidate's z_k be drawn again (in `ask`; a restored
   * pending population keeps its draws, so that its candidates come out the same).
   */
  private materialize(redraw: boolean): void {
    const n = this.dimension;
    const { bounds, boundHandling, maxResamples } = this.config;
    for (let k = 0; k < this.populationSize; k++) {
      const offset = k * n;
      const xk = this.x.subarray(offset, offset + n);
      this.candidate(offset);
      this.repaired[k] = 0;
      if (bounds === undefined) continue;
      if (boundHandling === 'mirror') {
        mirrorIntoBounds(xk, bounds, xk);
        continue;
      }
      for (let draw = 0; redraw && draw < maxResamples; draw++) {
        if (insideFreeCoordinates(xk, bounds)) break;
        this.sampler.fill(this.z.subarray(offset, offset + n));
        this.candidate(offset);
      }
      if (!insideFreeCoordinates(xk, bounds)) this.repaired[k] = 1;
      clipIntoBounds(xk, bounds, xk);
    }
    this.pending = true;
  }

  /** y = B·D·z and x = m + σ·y at `offset` (one candidate, before the bounds). */
  private candidate(offset: number): void {
    const n = this.dimension;
    const { m, x, y } = this;
    const sigma = this.sigmaValue;
    this.model.sample(this.z, offset, y, offset);
    for (let i = 0; i < n; i++) x[offset + i] = m[i]! + sigma * y[offset + i]!;
  }

  /**
   * Updates the distribution with the f values of the last population (minimisation).
   *
   * `solutions` are normally the arrays `ask` returned, in any order matching `fitness`. A
   * solution that differs from the asked candidate at its index is *injected* (Hansen 2011,
   * "Injecting external solutions into CMA-ES"): it enters the update as y = (x − m)/σ with
   * its Mahalanobis length clipped to √n + 2n/(n + 2). Injected solutions must lie inside the
   * bounds. A candidate that `resample` clipped into the box enters the update the same way.
   *
   * NaN fitness values rank last; +Infinity is allowed. Nothing changes when it throws.
   *
   * @param solutions λ vectors of length n
   * @param fitness λ numbers, f of each solution
   * @throws LetheError `E_STATE` naming `solutions` when no population is awaiting a tell
   * (tell before ask, or a second tell for one ask); `E_SHAPE` naming `solutions`, `fitness`
   * or `solutions[i]` for a wrong count or vector length; `E_ARG` naming `solutions` (not an
   * array), `solutions[i]` (not an array, a non-finite entry, outside the bounds),
   * `fitness[i]` (not a number) or `fitness` (every value NaN).
   */
  tell(solutions: readonly ArrayLike<number>[], fitness: ArrayLike<number>): void {
    if (!this.pending) {
      throw new LetheError(
        'E_STATE',
        this.generationCount === 0
          ? 'no population to tell: call ask() first'
          : 'this population was already told: call ask() for the next one',
        'solutions',
      );
    }
    const n = this.dimension;
    const lambda = this.populationSize;
    const p = this.parameters;
    if (!Array.isArray(solutions)) throw new LetheError('E_ARG', 'must be an array', 'solutions');
    if (solutions.length !== lambda) {
      throw new LetheError(
        'E_SHAPE',
        `expected ${lambda} solutions (the population size), got ${solutions.length}`,
        'solutions',
      );
    }
    if (fitness === null || typeof fitness !== 'object' || typeof fitness.length !== 'number') {
      throw new LetheError('E_ARG', 'must be an array of numbers', 'fitness');
    }
    if (fitness.length !== lambda) {
      throw new LetheError(
        'E_SHAPE',
        `expected ${lambda} values (the population size), got ${fitness.length}`,
        'fitness',
      );
    }
    const injected: number[] = [];
    for (let k = 0; k < lambda; k++) {
      const x = solutions[k];
      const name = `solutions[${k}]`;
      if (x === null || typeof x !== 'object' || typeof x.length !== 'number') {
        throw new LetheError('E_ARG', 'must be an array of numbers', name);
      }
      if (x.length !== n) {
        throw new LetheError('E_SHAPE', `expected length ${n}, got ${x.length}`, name);
      }
      const asked = this.x;
      const offset = k * n;
      let same = true;
      for (let i = 0; i < n; i++) {
        const v = x[i];
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          throw new LetheError('E_ARG', `entry ${i} is ${String(v)}, must be finite`, name);
        }
        if (v !== asked[offset + i]) same = false;
      }
      if (!same) {
        const b = this.config.bounds;
        if (b !== undefined) {
          for (let i = 0; i < n; i++) {
            if (!(x[i]! >= b.lower[i]! && x[i]! <= b.upper[i]!)) {
              throw new LetheError('E_ARG', `entry ${i} lies outside [lower, upper]`, name);
            }
          }
        }
        injected.push(k);
      } else if (this.repaired[k] === 1) {
        injected.push(k);
      }
    }
    const order = rankFitness(fitness);

    // --- from here on nothing throws: update the state ---
    this.pending = false;
    const { y, z } = this;
    const sigma = this.sigmaValue;
    const clip = p.injectionClip;
    for (const k of injected) {
      const x = solutions[k]!;
      for (let i = 0; i < n; i++) y[k * n + i] = (x[i]! - this.m[i]!) / sigma;
      this.model.whiten(y, k * n, z, k * n);
      let norm = 0;
      for (let i = 0; i < n; i++) norm += z[k * n + i]! ** 2;
      norm = Math.sqrt(norm);
      if (norm > clip) {
        const scale = clip / norm;
        for (let i = k * n; i < k * n + n; i++) {
          y[i]! *= scale;
          z[i]! *= scale;
        }
      }
    }

    const firstEvaluation = this.evaluationCount;
    this.evaluationCount += lambda;
    const bestIndex = order[0]!;
    const bestF = fitness[bestIndex]!;
    if (this.bestSolution === undefined || bestF < this.bestSolution.f) {
      this.bestSolution = {
        x: Float64Array.from(solutions[bestIndex]!),
        f: bestF,
        evaluation: firstEvaluation + bestIndex + 1,
      };
    }

    // Weighted means of the μ best steps: ⟨y⟩_w and ⟨z⟩_w.
    const { yw, zw, whitened } = this;
    yw.fill(0);
    zw.fill(0);
    for (let r = 0; r < p.mu; r++) {
      const w = p.weights[r]!;
      const k = order[r]! * n;
      for (let i = 0; i < n; i++) {
        yw[i]! += w * y[k + i]!;
        zw[i]! += w * z[k + i]!;
      }
    }
    // Mean (eq. 41).
    for (let i = 0; i < n; i++) this.m[i]! += p.cm * sigma * yw[i]!;
    // Step-size path (eq. 43): C^{-1/2}⟨y⟩_w = B⟨z⟩_w.
    this.model.rotate(zw, whitened);
    const csFactor = Math.sqrt(p.cs * (2 - p.cs) * p.muEff);
    let psNormSq = 0;
    for (let i = 0; i < n; i++) {
      this.ps[i] = (1 - p.cs) * this.ps[i]! + csFactor * whitened[i]!;
      psNormSq += this.ps[i]! ** 2;
    }
    const psNorm = Math.sqrt(psNormSq);
    // h_σ (below eq. 45) and the covariance path (eq. 45).
    const g = this.generationCount;
    const hsig =
      psNorm / Math.sqrt(1 - (1 - p.cs) ** (2 * (g + 1))) < p.hsigThreshold * p.chiN ? 1 : 0;
    const ccFactor = hsig * Math.sqrt(p.cc * (2 - p.cc) * p.muEff);
    for (let i = 0; i < n; i++) this.pc[i] = (1 - p.cc) * this.pc[i]! + ccFactor * yw[i]!;
    // Covariance (eqs. 46–47): negative weights rescaled by n / ‖C^{-1/2} y‖² = n / ‖z‖².
    const coefficients = new Float64Array(lambda);
    let weightSum = 0;
    for (let r = 0; r < lambda; r++) {
      let w = p.weights[r]!;
      weightSum += w;
      const k = order[r]!;
      if (w < 0) {
        let zNormSq = 0;
        for (let i = k * n; i < k * n + n; i++) zNormSq += z[i]! * z[i]!;
        w = zNormSq > 0 ? (w * n) / zNormSq : 0;
      }
      coefficients[k] = p.cmu * w;
    }
    const delta = (1 - hsig) * p.cc * (2 - p.cc);
    const decay = 1 + p.c1 * delta - p.c1 - p.cmu * weightSum;
    this.model.update(decay, p.c1, this.pc, y, coefficients);
    // Step size (eq. 44).
    let newSigma = sigma * Math.exp((p.cs / p.damps) * (psNorm / p.chiN - 1));
    // Flat fitness (the tutorial's reference code): escape a plateau.
    const flatIndex = order[Math.ceil(0.7 * lambda) - 1]!;
    if (fitness[flatIndex] === bestF) newSigma *= p.flatFitnessFactor;
    this.sigmaValue = newSigma;
    this.generationCount = g + 1;
    this.model.refresh(this.generationCount, p.eigenInterval);

    const sortedFitness = new Float64Array(lambda);
    for (let r = 0; r < lambda; r++) sortedFitness[r] = fitness[order[r]!]!;
    this.reasons = this.termination.check({
      generation: this.generationCount,
      evaluations: this.evaluationCount,
      bestF: this.bestSolution!.f,
      sortedFitness,
      mean: this.m,
      sigma: this.sigmaValue,
      sigma0: this.config.sigma0,
      pc: this.pc,
      model: this.model,
    });
  }

  /**
   * The run's complete state as plain JSON (see {@link CMAESState}); a fresh object.
   */
  state(): CMAESState {
    const b = this.bestSolution;
    return {
      format: CMAES_STATE_FORMAT,
      config: encodeConfig(this.config),
      rng: this.sampler.state(),
      generation: this.generationCount,
      evaluations: this.evaluationCount,
      mean: encodeArray(this.m),
      sigma: encodeNumber(this.sigmaValue),
      ps: encodeArray(this.ps),
      pc: encodeArray(this.pc),
      covariance: this.model.toJSON(),
      best:
        b === undefined
          ? null
          : { x: encodeArray(b.x), f: encodeNumber(b.f), evaluation: b.evaluation },
      termination: this.termination.toJSON(),
      stopReasons: this.reasons.slice(),
      pendingZ: this.pending ? encodeArray(this.z) : null,
    };
  }
}

/**
 * Restores a {@link NormalSampler} from its JSON state.
 *
 * @throws LetheError `E_FORMAT` naming `field.key` / `field.counter`.
 */
export function decodeSampler(value: unknown, field: string): NormalSampler {
  const s = decodeObject(value, field);
  try {
    return new NormalSampler({ key: s.key as [number, number], counter: s.counter as number });
  } catch (error) {
    const argument = (error as LetheError).argument ?? 'state';
    throw new LetheError('E_FORMAT', (error as Error).message, argument.replace('state', field));
  }
}

/**
 * Decodes and checks the best solution of a run state with `evaluations` evaluations: null
 * before the first tell and only then; x finite and inside the bounds, f not NaN, its
 * evaluation among the run's.
 *
 * @throws LetheError `E_FORMAT` naming `state.best` or its field at fault.
 */
export function decodeBest(
  value: unknown,
  config: CMAESConfig,
  evaluations: number,
): BestSolution | undefined {
  if ((value === null) !== (evaluations === 0)) {
    throw new LetheError(
      'E_FORMAT',
      value === null ? 'missing after a tell' : 'present before the first tell',
      'state.best',
    );
  }
  if (value === null) return undefined;
  const best = decodeObject(value, 'state.best');
  const x = decodeFiniteArray(best.x, 'state.best.x', config.dimension);
  if (config.bounds !== undefined && !insideBounds(x, config.bounds)) {
    throw new LetheError('E_FORMAT', 'outside [lower, upper]', 'state.best.x');
  }
  const f = decodeNumber(best.f, 'state.best.f');
  if (Number.isNaN(f)) throw new LetheError('E_FORMAT', 'a best f is never NaN', 'state.best.f');
  const evaluation = decodeCount(best.evaluation, 'state.best.evaluation', 1);
  if (evaluation > evaluations) {
    throw new LetheError(
      'E_FORMAT',
      `evaluation ${evaluation} of only ${evaluations}`,
      'state.best.evaluation',
    );
  }
  return { x, f, evaluation };
}
