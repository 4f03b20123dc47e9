import { assertInteger, LetheError } from '@lethe/core';
import { isFiniteBox } from './bounds';
import { type BestSolution, CMAES, copyBest } from './cmaes';
import { encodeArray, encodeNumber } from './json';
import { NormalSampler } from './normal';
import { type CMAESConfig, type CMAESOptions, encodeConfig, resolveOptions } from './options';
import {
  decodeRestartState,
  encodeUserStopping,
  RESTART_STATE_FORMAT,
  type RestartState,
} from './restart-state';
import type { StoppingOptions, StopReason } from './termination';

/**
 * How {@link RestartCMAES} restarts a run that stopped:
 *
 * - `none`: it does not (a single run).
 * - `ipop`: IPOP-CMA-ES (Auger & Hansen, CEC 2005): each restart multiplies λ by
 *   `populationFactor` (default 2); σ₀ stays.
 * - `bipop`: BIPOP-CMA-ES (Hansen, GECCO BBOB 2009): two interlaced regimes after the first
 *   (default) run. *Large*: λ = λ₀ · 2^k for the k-th large restart, σ₀. *Small*:
 *   λ = ⌊λ₀ (λ_next/(2λ₀))^(U²)⌋ (λ_next: the next large λ; U uniform in [0, 1)), σ = σ₀ ·
 *   10^(−2U'), at most half the evaluations of the latest large run. Each restart runs the
 *   regime that has used fewer evaluations so far (the first run counts for neither).
 */
export type RestartStrategy = 'none' | 'ipop' | 'bipop';

/** The restart policy. */
export interface RestartPolicy {
  /** Default `ipop` here, `none` when the whole `restarts` option is left out. */
  readonly strategy?: RestartStrategy;
  /**
   * Restarts after the first run (default 9, as in Hansen's BBOB runs; 0 for `none`). With
   * `bipop` only the large-population restarts count, as in pycma: the small-population runs
   * between them are bounded by their budget instead.
   */
  readonly maxRestarts?: number;
  /** IPOP / BIPOP large-regime factor on λ per restart, > 1. Default 2. */
  readonly populationFactor?: number;
  /**
   * Where restarts start: `x0` (the given x₀ each time) or `uniform` (a point drawn uniformly
   * in the box, which needs finite bounds on every coordinate). Default `uniform` when the
   * bounds are finite on every coordinate, else `x0`.
   */
  readonly restartFrom?: 'x0' | 'uniform';
}

/** Options of {@link RestartCMAES}: those of a run, plus the restart policy and budget. */
export interface RestartOptions extends CMAESOptions {
  /** Restart policy; left out, there are no restarts. */
  readonly restarts?: RestartPolicy;
  /**
   * Evaluations budget over all runs (default Infinity). `stopping.maxEvaluations` limits each
   * run; `stopping.ftarget`, once reached, ends everything.
   */
  readonly maxEvaluations?: number;
}

/**
 * Why a {@link RestartCMAES} stopped: `ftarget` (the best f reached `stopping.ftarget`),
 * `maxfevals` (the total budget `maxEvaluations` is used up), `maxrestarts` (the last run
 * stopped and no restart is left). Without restarts (strategy `none`), the run's own
 * {@link StopReason}s instead of `maxrestarts`.
 */
export type RestartStopReason = StopReason | 'maxrestarts';

/** The regime a run belonged to. */
export type RunRegime = 'first' | 'large' | 'small';

/** One finished run of a {@link RestartCMAES}. */
export interface RunSummary {
  readonly regime: RunRegime;
  readonly populationSize: number;
  readonly sigma0: number;
  readonly evaluations: number;
  readonly generations: number;
  /** Best f of this run. */
  readonly bestF: number;
  readonly stopReasons: readonly StopReason[];
}

/**
 * CMA-ES with restarts (IPOP or BIPOP, see {@link RestartStrategy}), driven by ask / tell like
 * {@link CMAES}: when a run stops, `tell` starts the next one, and `ask` samples from it. The
 * first run is exactly `new CMAES(options)`. The state is plain JSON and resumes bit-exactly.
 *
 * @example
 * ```ts
 * const es = new RestartCMAES({ x0: [0, 0], sigma0: 2, lower: -5, upper: 5, seed: 3,
 *   restarts: { strategy: 'bipop' }, maxEvaluations: 20_000, stopping: { ftarget: 1e-8 } });
 * while (!es.stopped) { const xs = es.ask(); es.tell(xs, xs.map(rastrigin)); }
 * ```
 */
export class RestartCMAES {
  private strategy: RestartStrategy;
  private maxRestarts: number;
  private populationFactor: number;
  private restartFrom: 'x0' | 'uniform';
  private maxEvaluations: number;
  private x0: Float64Array;
  private base: CMAESConfig;
  private stopping: StoppingOptions;
  private rng: NormalSampler;
  private largeRuns = 1;
  private budgetLarge = 0;
  private budgetSmall = 0;
  private lastLargeEvaluations = 0;
  private evaluationsBefore = 0;
  private iterationsBefore = 0;
  private bestSolution: BestSolution | undefined;
  private finished: RunSummary[] = [];
  private regime: RunRegime = 'first';
  private run: CMAES;
  private reasons: RestartStopReason[] = [];

  /**
   * @throws LetheError as {@link CMAES}'s constructor, and `E_ARG` naming `restarts.strategy`,
   * `restarts.maxRestarts`, `restarts.populationFactor`, `restarts.restartFrom` (`uniform`
   * without finite bounds) or `maxEvaluations`.
   */
  constructor(options: RestartOptions) {
    const { config, x0 } = resolveOptions(options);
    const policy = options.restarts;
    const strategy = policy === undefined ? 'none' : (policy.strategy ?? 'ipop');
    if (strategy !== 'none' && strategy !== 'ipop' && strategy !== 'bipop') {
      throw new LetheError(
        'E_ARG',
        `must be 'none', 'ipop' or 'bipop', got ${String(strategy)}`,
        'restarts.strategy',
      );
    }
    this.strategy = strategy;
    this.maxRestarts =
      strategy === 'none'
        ? 0
        : policy?.maxRestarts === undefined
          ? 9
          : assertInteger(policy.maxRestarts, 'restarts.maxRestarts', 0);
    const factor = policy?.populationFactor ?? 2;
    if (!(factor > 1 && Number.isFinite(factor))) {
      throw new LetheError(
        'E_ARG',
        `must be finite and > 1, got ${factor}`,
        'restarts.populationFactor',
      );
    }
    this.populationFactor = factor;
    const from = policy?.restartFrom ?? (isFiniteBox(config.bounds) ? 'uniform' : 'x0');
    if (from !== 'x0' && from !== 'uniform') {
      throw new LetheError(
        'E_ARG',
        `must be 'x0' or 'uniform', got ${String(from)}`,
        'restarts.restartFrom',
      );
    }
    if (from === 'uniform' && !isFiniteBox(config.bounds)) {
      throw new LetheError(
        'E_ARG',
        "'uniform' needs finite lower and upper bounds on every coordinate",
        'restarts.restartFrom',
      );
    }
    this.restartFrom = from;
    const total = options.maxEvaluations ?? Number.POSITIVE_INFINITY;
    if (total !== Number.POSITIVE_INFINITY) assertInteger(total, 'maxEvaluations', 1);
    this.maxEvaluations = total;
    this.x0 = x0;
    this.base = config;
    this.stopping = options.stopping ?? {};
    const seed = options.seed ?? 0;
    this.run = new CMAES({ ...options, stopping: this.runStopping(this.stopping.maxEvaluations) });
    this.rng = NormalSampler.fromSeed(seed, 'restarts');
  }

  /**
   * Continues from {@link RestartCMAES.state}, bit-identically (reads the current format and
   * version 2, see {@link RESTART_STATE_FORMAT}). Every value is checked as
   * `decodeRestartState` describes.
   *
   * @throws LetheError `E_FORMAT` naming the field of `state` at fault.
   */
  static fromState(state: RestartState): RestartCMAES {
    const d = decodeRestartState(state);
    const base = d.base;
    const es = new RestartCMAES({
      x0: d.x0,
      sigma0: base.sigma0,
      populationSize: base.populationSize,
      diagonal: base.diagonal,
      active: base.active,
      cm: base.cm,
    });
    es.strategy = d.strategy;
    es.maxRestarts = d.maxRestarts;
    es.populationFactor = d.populationFactor;
    es.restartFrom = d.restartFrom;
    es.maxEvaluations = d.maxEvaluations;
    es.base = base;
    es.stopping = d.stopping;
    es.rng = d.rng;
    es.largeRuns = d.largeRuns;
    es.budgetLarge = d.budgetLarge;
    es.budgetSmall = d.budgetSmall;
    es.lastLargeEvaluations = d.lastLargeEvaluations;
    es.evaluationsBefore = d.evaluationsBefore;
    es.iterationsBefore = d.iterationsBefore;
    es.bestSolution = d.best;
    es.finished = d.runs;
    es.regime = d.currentRegime;
    es.run = d.current;
    es.reasons = d.stopReasons;
    return es;
  }

  /** The run in progress (read it; drive it through this object). */
  get current(): CMAES {
    return this.run;
  }

  /** The regime of the run in progress. */
  get currentRegime(): RunRegime {
    return this.regime;
  }

  /** Index of the run in progress (0 for the first). */
  get runIndex(): number {
    return this.finished.length;
  }

  /** The finished runs. */
  get runs(): readonly RunSummary[] {
    return this.finished.slice();
  }

  /** Evaluations over all runs. */
  get evaluations(): number {
    return this.evaluationsBefore + this.run.evaluations;
  }

  /** Generations over all runs. */
  get iterations(): number {
    return this.iterationsBefore + this.run.generation;
  }

  /** The best candidate of all runs (evaluation counted over all runs), or undefined. */
  get best(): BestSolution | undefined {
    return copyBest(this.bestSolution);
  }

  /** Why everything stopped (empty while going on). */
  get stopReasons(): readonly RestartStopReason[] {
    return this.reasons.slice();
  }

  /** Whether everything stopped. */
  get stopped(): boolean {
    return this.reasons.length > 0;
  }

  /**
   * The current run's next population (see {@link CMAES.ask}).
   *
   * @throws LetheError `E_STATE` when the last population has not been told, or when
   * everything stopped.
   */
  ask(): Float64Array[] {
    if (this.stopped) {
      throw new LetheError('E_STATE', `stopped (${this.reasons.join(', ')}): nothing to ask`);
    }
    return this.run.ask();
  }

  /**
   * Tells the current run (see {@link CMAES.tell}); when it stops, records it and starts the
   * next run, or stops everything (see {@link RestartCMAES.stopReasons}).
   *
   * @throws LetheError as {@link CMAES.tell}.
   */
  tell(solutions: readonly ArrayLike<number>[], fitness: ArrayLike<number>): void {
    const run = this.run;
    run.tell(solutions, fitness);
    const best = run.best!;
    if (this.bestSolution === undefined || best.f < this.bestSolution.f) {
      this.bestSolution = { ...best, evaluation: this.evaluationsBefore + best.evaluation };
    }
    const total = this.evaluations;
    const reasons: RestartStopReason[] = [];
    if (this.bestSolution.f <= (this.stopping.ftarget ?? Number.NEGATIVE_INFINITY)) {
      reasons.push('ftarget');
    }
    if (total >= this.maxEvaluations) reasons.push('maxfevals');
    if (!run.stopped && reasons.length === 0) return;
    this.finishRun();
    if (reasons.length === 0 && this.countedRuns() > this.maxRestarts) {
      reasons.push(...(this.strategy === 'none' ? run.stopReasons : (['maxrestarts'] as const)));
    }
    if (reasons.length > 0) {
      this.reasons = reasons;
      return;
    }
    this.startRun();
  }

  /**
   * The finished runs that count against `maxRestarts` + 1: all but BIPOP's small-population
   * runs, which (as in pycma's `fmin`, `irun - runs_with_small > restarts`) do not.
   */
  private countedRuns(): number {
    return this.finished.filter((r) => r.regime !== 'small').length;
  }

  private finishRun(): void {
    const run = this.run;
    this.finished.push({
      regime: this.regime,
      populationSize: run.populationSize,
      sigma0: run.config.sigma0,
      evaluations: run.evaluations,
      generations: run.generation,
      bestF: run.best?.f ?? Number.NaN,
      stopReasons: run.stopReasons,
    });
    if (this.regime === 'large') {
      this.budgetLarge += run.evaluations;
      this.lastLargeEvaluations = run.evaluations;
    } else if (this.regime === 'small') {
      this.budgetSmall += run.evaluations;
    } else {
      this.lastLargeEvaluations = run.evaluations;
    }
  }

  private startRun(): void {
    this.evaluationsBefore += this.run.evaluations;
    this.iterationsBefore += this.run.generation;
    const base = this.base;
    const lambda0 = base.populationSize;
    let regime: RunRegime = 'large';
    let populationSize: number;
    let sigma0 = base.sigma0;
    let runBudget = this.stopping.maxEvaluations ?? Number.POSITIVE_INFINITY;
    const sampler = this.rng;
    if (this.strategy === 'bipop' && this.budgetSmall < this.budgetLarge) {
      regime = 'small';
      const u = sampler.uniform(2);
      const u1 = u[0]!;
      const u2 = u[1]!;
      const nextLarge = lambda0 * this.populationFactor ** this.largeRuns;
      populationSize = Math.max(2, Math.floor(lambda0 * (nextLarge / (2 * lambda0)) ** (u1 * u1)));
      sigma0 = base.sigma0 * 10 ** (-2 * u2);
      runBudget = Math.min(
        runBudget,
        Math.max(populationSize, Math.ceil(this.lastLargeEvaluations / 2)),
      );
    } else {
      populationSize = Math.round(lambda0 * this.populationFactor ** this.largeRuns);
      this.largeRuns++;
    }
    const remaining = this.maxEvaluations - this.evaluationsBefore;
    runBudget = Math.min(runBudget, remaining);
    let x0: Float64Array = this.x0;
    if (this.restartFrom === 'uniform') {
      const u = sampler.uniform(base.dimension);
      const { lower, upper } = base.bounds!;
      x0 = new Float64Array(base.dimension);
      for (let i = 0; i < x0.length; i++) x0[i] = lower[i]! + u[i]! * (upper[i]! - lower[i]!);
    }
    const seed = sampler.seed();
    this.regime = regime;
    this.run = new CMAES({
      x0,
      sigma0,
      seed,
      populationSize,
      diagonal: base.diagonal,
      active: base.active,
      cm: base.cm,
      lower: base.bounds?.lower,
      upper: base.bounds?.upper,
      boundHandling: base.boundHandling,
      maxResamples: base.maxResamples,
      stopping: this.runStopping(runBudget),
    });
  }

  private runStopping(maxEvaluations: number | undefined): StoppingOptions {
    const budget = Math.min(maxEvaluations ?? Number.POSITIVE_INFINITY, this.maxEvaluations);
    return { ...this.stopping, maxEvaluations: budget };
  }

  /** Plain-JSON state (see {@link RestartState}); a fresh object. */
  state(): RestartState {
    const b = this.bestSolution;
    return {
      format: RESTART_STATE_FORMAT,
      strategy: this.strategy,
      maxRestarts: this.maxRestarts,
      populationFactor: encodeNumber(this.populationFactor),
      restartFrom: this.restartFrom,
      maxEvaluations: encodeNumber(this.maxEvaluations),
      x0: encodeArray(this.x0),
      base: encodeConfig(this.base),
      stopping: encodeUserStopping(this.stopping),
      rng: this.rng.state(),
      largeRuns: this.largeRuns,
      budgetLarge: this.budgetLarge,
      budgetSmall: this.budgetSmall,
      lastLargeEvaluations: this.lastLargeEvaluations,
      evaluationsBefore: this.evaluationsBefore,
      iterationsBefore: this.iterationsBefore,
      best:
        b === undefined
          ? null
          : { x: encodeArray(b.x), f: encodeNumber(b.f), evaluation: b.evaluation },
      runs: this.finished.map((r) => ({
        regime: r.regime,
        populationSize: r.populationSize,
        sigma0: encodeNumber(r.sigma0),
        evaluations: r.evaluations,
        generations: r.generations,
        bestF: encodeNumber(r.bestF),
        stopReasons: r.stopReasons.slice(),
      })),
      currentRegime: this.regime,
      current: this.run.state(),
      stopReasons: this.reasons.slice(),
    };
  }
}
