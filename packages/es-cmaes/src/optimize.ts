import { LetheError } from '@lethe/core';
import type { RestartState } from './restart-state';
import {
  RestartCMAES,
  type RestartOptions,
  type RestartStopReason,
  type RunRegime,
  type RunSummary,
} from './restarts';
import type { StopReason } from './termination';

/** What {@link optimize} reports after every generation. */
export interface Progress {
  /** Index of the run (0 for the first; restarts count up). */
  readonly run: number;
  /** The run's regime (`first`, or `large` / `small` for IPOP / BIPOP restarts). */
  readonly regime: RunRegime;
  /** Generations of this run. */
  readonly generation: number;
  /** Generations over all runs. */
  readonly iterations: number;
  /** Evaluations over all runs. */
  readonly evaluations: number;
  /** Best f so far, over all runs. */
  readonly bestF: number;
  /** Best f of the generation just told. */
  readonly generationBestF: number;
  /** The run's step size σ. */
  readonly sigma: number;
  /** The run's λ. */
  readonly populationSize: number;
  /** The run's max/min axis length ratio of C. */
  readonly axisRatio: number;
  /** Stopping criteria of the run that hold now (the run restarts or ends after this). */
  readonly runStopReasons: readonly StopReason[];
  /** The whole optimisation's state as plain JSON, for a checkpoint (computed on call). */
  state(): RestartState;
}

/** Options of {@link optimize}: those of {@link RestartCMAES}, plus a callback and a resume. */
export interface OptimizeOptions extends RestartOptions {
  /**
   * Called after every generation; return `false` to stop (the result then names `callback`),
   * anything else (or nothing) to go on.
   */
  readonly onProgress?: (progress: Progress) => unknown;
  /**
   * Continue from a saved {@link RestartState} (e.g. `progress.state()` of an earlier call)
   * instead of starting from `x0`; the other options are then ignored except `onProgress`.
   * The continuation is bit-identical to the uninterrupted run.
   */
  readonly resume?: RestartState;
}

/** Why {@link optimize} returned. */
export type OptimizeStopReason = RestartStopReason | 'callback';

/** What {@link optimize} returns. */
export interface OptimizeResult {
  /** The best candidate evaluated (inside the bounds). */
  readonly x: Float64Array;
  /** f(x). */
  readonly f: number;
  /** Evaluations over all runs. */
  readonly evaluations: number;
  /** Generations over all runs. */
  readonly iterations: number;
  readonly stopReasons: readonly OptimizeStopReason[];
  /** The finished runs, each with its own stopping criteria by name. */
  readonly runs: readonly RunSummary[];
  /** The final state as plain JSON. */
  readonly state: RestartState;
}

/**
 * Minimises `f` with CMA-ES (with IPOP / BIPOP restarts when `options.restarts` asks for
 * them) and returns the best point found.
 *
 * @param f the objective; called with a fresh `Float64Array` of length n (inside the bounds),
 * returns a number (NaN ranks last, +Infinity is allowed)
 * @throws LetheError as {@link RestartCMAES}'s constructor, `E_ARG` naming `f` (not a
 * function) or `fitness[i]` (f returned a non-number) or `fitness` (f returned NaN for the
 * whole population); `E_FORMAT` for a malformed `resume`. Errors thrown by `f` propagate.
 *
 * @example
 * ```ts
 * const result = optimize(rosenbrock, { x0: new Float64Array(10).fill(3), sigma0: 2 });
 * console.log(result.f, result.evaluations, result.runs[0].stopReasons);
 * ```
 */
export function optimize(f: (x: Float64Array) => number, options: OptimizeOptions): OptimizeResult {
  if (typeof f !== 'function') throw new LetheError('E_ARG', 'must be a function', 'f');
  const es =
    options.resume === undefined
      ? new RestartCMAES(options)
      : RestartCMAES.fromState(options.resume);
  const onProgress = options.onProgress;
  let reasons: OptimizeStopReason[] = es.stopReasons.slice();
  if (es.current.awaitingTell) {
    throw new LetheError(
      'E_STATE',
      'the state was saved between ask and tell; optimize() resumes only after a tell',
      'resume',
    );
  }
  while (reasons.length === 0) {
    const xs = es.ask();
    const fitness: number[] = new Array(xs.length);
    for (let k = 0; k < xs.length; k++) fitness[k] = f(xs[k]!.slice());
    const run = es.current;
    const runIndex = es.runIndex;
    const regime = es.currentRegime;
    es.tell(xs, fitness);
    let generationBestF = Number.NaN;
    for (const v of fitness) if (!(v >= generationBestF) && !Number.isNaN(v)) generationBestF = v;
    if (onProgress !== undefined) {
      const verdict = onProgress({
        run: runIndex,
        regime,
        generation: run.generation,
        iterations: es.iterations,
        evaluations: es.evaluations,
        bestF: es.best!.f,
        generationBestF,
        sigma: run.sigma,
        populationSize: run.populationSize,
        axisRatio: run.axisRatio,
        runStopReasons: run.stopReasons,
        state: () => es.state(),
      });
      if (verdict === false && !es.stopped) reasons = ['callback'];
    }
    if (es.stopped) reasons = es.stopReasons.slice();
  }
  const best = es.best!;
  return {
    x: best.x,
    f: best.f,
    evaluations: es.evaluations,
    iterations: es.iterations,
    stopReasons: reasons,
    runs: es.runs,
    state: es.state(),
  };
}
