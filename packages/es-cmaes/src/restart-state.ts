import { LetheError, type RngState } from '@lethe/core';
import { insideBounds, isFiniteBox } from './bounds';
import { type BestSolution, CMAES, type CMAESState, decodeBest, decodeSampler } from './cmaes';
import {
  decodeCount,
  decodeFinite,
  decodeFiniteArray,
  decodeNumber,
  decodeObject,
  encodeNumber,
  type JsonNumber,
  MAGNITUDE_LIMIT,
} from './json';
import type { NormalSampler } from './normal';
import { type CMAESConfig, type CMAESConfigState, decodeConfig } from './options';
import type { RestartStopReason, RestartStrategy, RunRegime, RunSummary } from './restarts';
import {
  resolveStopping,
  STOP_REASONS,
  type StoppingOptions,
  type StopReason,
} from './termination';

/**
 * Identifies a {@link RestartState}. Version 3 holds a `lethe-es-cmaes/3` run, and
 * `maxRestarts` no longer counts BIPOP's small-population runs (as pycma); a version-2 state
 * is still read, and continues under that rule.
 */
export const RESTART_STATE_FORMAT = 'lethe-es-cmaes/restarts/3';

/** The previous format, still read (see {@link RESTART_STATE_FORMAT}). */
export const RESTART_STATE_FORMAT_V2 = 'lethe-es-cmaes/restarts/2';

/** A {@link RestartCMAES} as plain JSON; see {@link CMAESState} for the guarantees. */
export interface RestartState {
  readonly format: typeof RESTART_STATE_FORMAT | typeof RESTART_STATE_FORMAT_V2;
  readonly strategy: RestartStrategy;
  readonly maxRestarts: number;
  readonly populationFactor: JsonNumber;
  readonly restartFrom: 'x0' | 'uniform';
  readonly maxEvaluations: JsonNumber;
  readonly x0: JsonNumber[];
  /** The first run's configuration (λ₀, σ₀, bounds, variant, …). */
  readonly base: CMAESConfigState;
  /** The stopping options as given (defaults are filled in per run). */
  readonly stopping: Record<string, JsonNumber | boolean>;
  /** The stream restart decisions are drawn from. */
  readonly rng: RngState;
  readonly largeRuns: number;
  readonly budgetLarge: number;
  readonly budgetSmall: number;
  readonly lastLargeEvaluations: number;
  /** Evaluations and generations of the runs before the current one. */
  readonly evaluationsBefore: number;
  readonly iterationsBefore: number;
  readonly best: {
    readonly x: JsonNumber[];
    readonly f: JsonNumber;
    readonly evaluation: number;
  } | null;
  readonly runs: {
    readonly regime: RunRegime;
    readonly populationSize: number;
    readonly sigma0: JsonNumber;
    readonly evaluations: number;
    readonly generations: number;
    readonly bestF: JsonNumber;
    readonly stopReasons: StopReason[];
  }[];
  readonly currentRegime: RunRegime;
  readonly current: CMAESState;
  readonly stopReasons: RestartStopReason[];
}

/** A {@link RestartState}, decoded and checked. */
export interface DecodedRestartState {
  readonly strategy: RestartStrategy;
  readonly maxRestarts: number;
  readonly populationFactor: number;
  readonly restartFrom: 'x0' | 'uniform';
  readonly maxEvaluations: number;
  readonly x0: Float64Array;
  readonly base: CMAESConfig;
  readonly stopping: StoppingOptions;
  readonly rng: NormalSampler;
  readonly largeRuns: number;
  readonly budgetLarge: number;
  readonly budgetSmall: number;
  readonly lastLargeEvaluations: number;
  readonly evaluationsBefore: number;
  readonly iterationsBefore: number;
  readonly best: BestSolution | undefined;
  readonly runs: RunSummary[];
  readonly currentRegime: RunRegime;
  readonly current: CMAES;
  readonly stopReasons: RestartStopReason[];
}

/**
 * Decodes a {@link RestartState} and checks every value: the options as the constructor
 * checks them, the runs (regime, λ ≥ 2, 0 < σ₀ ≤ 10³², counts), the counters against the runs
 * they sum up, the best solution, and the current run as {@link CMAES.fromState} does.
 *
 * @throws LetheError `E_FORMAT` naming the field at fault (the current run's as
 * {@link CMAES.fromState} names them: `state.mean`, …).
 */
export function decodeRestartState(state: unknown): DecodedRestartState {
  const s = decodeObject(state, 'state');
  if (s.format !== RESTART_STATE_FORMAT && s.format !== RESTART_STATE_FORMAT_V2) {
    throw new LetheError(
      'E_FORMAT',
      `expected ${RESTART_STATE_FORMAT} or ${RESTART_STATE_FORMAT_V2}, got ${JSON.stringify(s.format)}`,
      'state.format',
    );
  }
  const base = decodeConfig(s.base, 'state.base', s.format === RESTART_STATE_FORMAT_V2);
  const x0 = decodeFiniteArray(s.x0, 'state.x0', base.dimension, {
    magnitude: MAGNITUDE_LIMIT,
  });
  if (base.bounds !== undefined && !insideBounds(x0, base.bounds)) {
    throw new LetheError('E_FORMAT', 'outside [lower, upper]', 'state.x0');
  }
  const stopping = decodeUserStopping(s.stopping, base);
  const strategy = s.strategy;
  if (strategy !== 'none' && strategy !== 'ipop' && strategy !== 'bipop') {
    throw new LetheError('E_FORMAT', 'unknown strategy', 'state.strategy');
  }
  const restartFrom = s.restartFrom;
  if (restartFrom !== 'x0' && !(restartFrom === 'uniform' && isFiniteBox(base.bounds))) {
    throw new LetheError(
      'E_FORMAT',
      "not 'x0', or 'uniform' with finite bounds",
      'state.restartFrom',
    );
  }
  const populationFactor = decodeFinite(s.populationFactor, 'state.populationFactor');
  if (!(populationFactor > 1)) {
    throw new LetheError(
      'E_FORMAT',
      `must be > 1, got ${populationFactor}`,
      'state.populationFactor',
    );
  }
  const maxEvaluations = decodeNumber(s.maxEvaluations, 'state.maxEvaluations');
  if (maxEvaluations !== Number.POSITIVE_INFINITY) {
    decodeCount(maxEvaluations, 'state.maxEvaluations', 1);
  }
  const runs = decodeRuns(s.runs);
  const reasons = s.stopReasons;
  if (
    !Array.isArray(reasons) ||
    !reasons.every((r) => r === 'maxrestarts' || STOP_REASONS.has(r))
  ) {
    throw new LetheError('E_FORMAT', 'not an array of stop reasons', 'state.stopReasons');
  }
  const stopped = reasons.length > 0;
  const currentRegime = s.currentRegime;
  const expectedRegime = stopped ? runs.at(-1)?.regime : runs.length === 0 ? 'first' : undefined;
  if (
    (currentRegime !== 'large' && currentRegime !== 'small' && currentRegime !== 'first') ||
    (expectedRegime !== undefined ? currentRegime !== expectedRegime : currentRegime === 'first')
  ) {
    throw new LetheError('E_FORMAT', 'unknown, or not the current run’s', 'state.currentRegime');
  }
  const current = CMAES.fromState(s.current as CMAESState);
  if (current.dimension !== base.dimension) {
    throw new LetheError('E_FORMAT', 'of another dimension than state.base', 'state.current');
  }
  const counters = checkCounters(s, runs, stopped, currentRegime);
  return {
    strategy,
    maxRestarts: decodeCount(s.maxRestarts, 'state.maxRestarts'),
    populationFactor,
    restartFrom,
    maxEvaluations,
    x0,
    base,
    stopping,
    rng: decodeSampler(s.rng, 'state.rng'),
    ...counters,
    best: decodeBest(s.best, base, counters.evaluationsBefore + current.evaluations),
    runs,
    currentRegime,
    current,
    stopReasons: reasons as RestartStopReason[],
  };
}

function decodeRuns(value: unknown): RunSummary[] {
  if (!Array.isArray(value)) throw new LetheError('E_FORMAT', 'not an array', 'state.runs');
  return value.map((r: unknown, i: number) => {
    const field = `state.runs[${i}]`;
    const o = decodeObject(r, field);
    const regime = o.regime as RunRegime;
    if (regime !== (i === 0 ? 'first' : 'large') && !(i > 0 && regime === 'small')) {
      throw new LetheError('E_FORMAT', `not a regime of run ${i}`, `${field}.regime`);
    }
    if (!Array.isArray(o.stopReasons) || !o.stopReasons.every((x) => STOP_REASONS.has(x))) {
      throw new LetheError('E_FORMAT', 'not an array of stop reasons', `${field}.stopReasons`);
    }
    return {
      regime,
      populationSize: decodeCount(o.populationSize, `${field}.populationSize`, 2),
      sigma0: decodeFinite(o.sigma0, `${field}.sigma0`, {
        positive: true,
        magnitude: MAGNITUDE_LIMIT,
      }),
      evaluations: decodeCount(o.evaluations, `${field}.evaluations`),
      generations: decodeCount(o.generations, `${field}.generations`),
      bestF: decodeNumber(o.bestF, `${field}.bestF`),
      stopReasons: o.stopReasons as StopReason[],
    };
  });
}

/** The counters a {@link RestartState} keeps, each checked against the runs it sums up. */
function checkCounters(
  s: Record<string, unknown>,
  runs: readonly RunSummary[],
  stopped: boolean,
  currentRegime: RunRegime,
): Pick<
  DecodedRestartState,
  | 'largeRuns'
  | 'budgetLarge'
  | 'budgetSmall'
  | 'lastLargeEvaluations'
  | 'evaluationsBefore'
  | 'iterationsBefore'
> {
  // When everything stopped, the last run is both finished and current.
  const before = stopped ? runs.slice(0, -1) : runs;
  const sum = (list: readonly RunSummary[], key: 'evaluations' | 'generations'): number =>
    list.reduce((total, r) => total + r[key], 0);
  const large = runs.filter((r) => r.regime === 'large');
  const expected = {
    largeRuns: 1 + large.length + (!stopped && currentRegime === 'large' ? 1 : 0),
    budgetLarge: sum(large, 'evaluations'),
    budgetSmall: sum(
      runs.filter((r) => r.regime === 'small'),
      'evaluations',
    ),
    lastLargeEvaluations: runs.filter((r) => r.regime !== 'small').at(-1)?.evaluations ?? 0,
    evaluationsBefore: sum(before, 'evaluations'),
    iterationsBefore: sum(before, 'generations'),
  };
  for (const [key, value] of Object.entries(expected)) {
    const field = `state.${key}`;
    const saved = decodeCount(s[key], field);
    if (saved !== value) {
      throw new LetheError('E_FORMAT', `${saved}, but the runs give ${value}`, field);
    }
  }
  return expected;
}

/** The stopping options as given, as JSON. */
export function encodeUserStopping(s: StoppingOptions): Record<string, JsonNumber | boolean> {
  const out: Record<string, JsonNumber | boolean> = {};
  for (const [key, value] of Object.entries(s)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'boolean' ? value : encodeNumber(value as number);
  }
  return out;
}

const USER_STOPPING_KEYS = new Set([
  'ftarget',
  'maxEvaluations',
  'maxIterations',
  'tolFun',
  'tolFunHist',
  'tolX',
  'tolUpSigma',
  'conditionCov',
  'noEffectAxis',
  'noEffectCoord',
  'stagnation',
]);

/** Decodes {@link encodeUserStopping}'s output and checks it as the constructor does. */
function decodeUserStopping(value: unknown, base: CMAESConfig): StoppingOptions {
  const s = decodeObject(value, 'state.stopping');
  const out: Record<string, number | boolean> = {};
  for (const [key, v] of Object.entries(s)) {
    if (!USER_STOPPING_KEYS.has(key)) {
      throw new LetheError('E_FORMAT', `unknown criterion ${key}`, 'state.stopping');
    }
    out[key] = typeof v === 'boolean' ? v : decodeNumber(v, `state.stopping.${key}`);
  }
  const stopping = out as StoppingOptions;
  try {
    resolveStopping(stopping, base.dimension, base.populationSize, base.sigma0);
  } catch (error) {
    const { message, argument } = error as LetheError;
    throw new LetheError('E_FORMAT', message, `state.${argument}`);
  }
  return stopping;
}
