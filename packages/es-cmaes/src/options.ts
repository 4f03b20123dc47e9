import { assertFiniteInRange, LetheError } from '@lethe/core';
import {
  type BoundHandling,
  type Bounds,
  type BoundsInput,
  insideBounds,
  resolveBounds,
} from './bounds';
import {
  decodeArray,
  decodeCount,
  decodeNumber,
  decodeObject,
  encodeArray,
  encodeNumber,
  type JsonNumber,
  MAGNITUDE_LIMIT,
} from './json';
import { defaultPopulationSize } from './parameters';
import {
  decodeStopping,
  encodeStopping,
  type ResolvedStopping,
  resolveStopping,
  type StoppingOptions,
} from './termination';

/** Options of a {@link CMAES} run. Only `x0` and `sigma0` are required. */
export interface CMAESOptions {
  /**
   * The initial mean m₀ (its length is the dimension n); inside the bounds when given; entries
   * within ±10³² ({@link MAGNITUDE_LIMIT}).
   */
  readonly x0: ArrayLike<number>;
  /**
   * σ₀, the initial step size, in (0, 10³²]: about a quarter to a half of the width of the
   * region where the optimum is expected (every coordinate is sampled with standard deviation
   * σ₀ at first).
   */
  readonly sigma0: number;
  /**
   * Seed of the Philox generator: a non-negative safe integer or a bigint < 2⁶⁴. Default 0:
   * runs are reproducible unless you pass different seeds.
   */
  readonly seed?: number | bigint;
  /** λ, samples per generation, an integer ≥ 2. Default 4 + ⌊3 ln n⌋. */
  readonly populationSize?: number;
  /**
   * Separable CMA-ES: a diagonal covariance matrix (O(n) per sample instead of O(n²)), with
   * the learning rates c₁ and c_μ multiplied by (n + 2)/3 (Ros & Hansen 2008). For large n or
   * (nearly) separable problems. Default false.
   */
  readonly diagonal?: boolean;
  /** Active CMA (negative weights for the worst samples). Default true. */
  readonly active?: boolean;
  /** c_m, the mean's learning rate, in (0, 1]. Default 1. */
  readonly cm?: number;
  /** Lower bounds: one number for all coordinates or one per coordinate (−Infinity: none). */
  readonly lower?: BoundsInput;
  /** Upper bounds: one number for all coordinates or one per coordinate (+Infinity: none). */
  readonly upper?: BoundsInput;
  /**
   * What happens to a candidate outside the bounds: `mirror` (reflected into the box) or
   * `resample` (redrawn, then clipped); see {@link BoundHandling}. Default `mirror`.
   */
  readonly boundHandling?: BoundHandling;
  /**
   * With `boundHandling: 'resample'`, how many times an out-of-box candidate is redrawn before
   * it is clipped: an integer ≥ 0. Default 100 (CyberAgentAILab `cmaes`' `n_max_resampling`).
   */
  readonly maxResamples?: number;
  /** Stopping criteria; see {@link StoppingOptions} for the defaults. */
  readonly stopping?: StoppingOptions;
}

/** The resolved, checked configuration of a run (part of its JSON state). */
export interface CMAESConfig {
  readonly dimension: number;
  readonly populationSize: number;
  readonly sigma0: number;
  readonly diagonal: boolean;
  readonly active: boolean;
  readonly cm: number;
  readonly bounds: Bounds | undefined;
  readonly boundHandling: BoundHandling;
  /** Redraws of an out-of-box candidate with `resample` (unused with `mirror`). */
  readonly maxResamples: number;
  readonly stopping: ResolvedStopping;
}

/** The default of {@link CMAESOptions.maxResamples}. */
const DEFAULT_MAX_RESAMPLES = 100;

/**
 * Checks {@link CMAESOptions} and fills in the defaults; returns the config and x₀.
 *
 * @throws LetheError `E_ARG` naming `options` (not an object), `x0` (a non-finite entry, one
 * beyond ±10³², outside the bounds), `sigma0` (not in (0, 10³²]), `populationSize`, `cm`,
 * `diagonal`, `active`, `lower`, `upper`, `boundHandling`, `maxResamples` or
 * `stopping.<field>`; `E_SHAPE` naming `x0` (empty) or `lower` / `upper` (wrong length).
 */
export function resolveOptions(options: CMAESOptions): { config: CMAESConfig; x0: Float64Array } {
  if (typeof options !== 'object' || options === null) {
    throw new LetheError('E_ARG', 'must be an options object', 'options');
  }
  const { x0: x0Input } = options;
  if (x0Input === undefined || x0Input === null || typeof x0Input.length !== 'number') {
    throw new LetheError('E_ARG', 'must be an array of numbers', 'x0');
  }
  const dimension = x0Input.length;
  if (dimension < 1) throw new LetheError('E_SHAPE', 'must not be empty', 'x0');
  const x0 = new Float64Array(dimension);
  for (let i = 0; i < dimension; i++) {
    const v = x0Input[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new LetheError('E_ARG', `entry ${i} is ${String(v)}, must be finite`, 'x0');
    }
    if (Math.abs(v) > MAGNITUDE_LIMIT) {
      throw new LetheError('E_ARG', `entry ${i} is ${v}, beyond ±${MAGNITUDE_LIMIT}`, 'x0');
    }
    x0[i] = v;
  }
  const config = resolveConfig(options, dimension);
  if (config.bounds !== undefined && !insideBounds(x0, config.bounds)) {
    throw new LetheError('E_ARG', 'must lie inside [lower, upper]', 'x0');
  }
  return { config, x0 };
}

/** Every check of {@link resolveOptions} but those of x₀, for dimension n. */
function resolveConfig(options: Omit<CMAESOptions, 'x0'>, dimension: number): CMAESConfig {
  const sigma0 = assertFiniteInRange(options.sigma0, 'sigma0', 0, MAGNITUDE_LIMIT);
  if (sigma0 === 0) throw new LetheError('E_ARG', 'must be > 0', 'sigma0');
  const populationSize = options.populationSize ?? defaultPopulationSize(dimension);
  if (!Number.isInteger(populationSize) || populationSize < 2) {
    throw new LetheError(
      'E_ARG',
      `must be an integer ≥ 2, got ${populationSize}`,
      'populationSize',
    );
  }
  const cm = options.cm ?? 1;
  if (!(cm > 0 && cm <= 1)) throw new LetheError('E_ARG', `must be in (0, 1], got ${cm}`, 'cm');
  const diagonal = flag(options.diagonal, false, 'diagonal');
  const active = flag(options.active, true, 'active');
  const bounds = resolveBounds(options.lower, options.upper, dimension);
  const boundHandling = options.boundHandling ?? 'mirror';
  if (boundHandling !== 'mirror' && boundHandling !== 'resample') {
    throw new LetheError(
      'E_ARG',
      `must be 'mirror' or 'resample', got ${String(boundHandling)}`,
      'boundHandling',
    );
  }
  const maxResamples = options.maxResamples ?? DEFAULT_MAX_RESAMPLES;
  if (!Number.isSafeInteger(maxResamples) || maxResamples < 0) {
    throw new LetheError(
      'E_ARG',
      `must be an integer ≥ 0, got ${String(maxResamples)}`,
      'maxResamples',
    );
  }
  const stopping = resolveStopping(options.stopping, dimension, populationSize, sigma0);
  return {
    dimension,
    populationSize,
    sigma0,
    diagonal,
    active,
    cm,
    bounds,
    boundHandling,
    maxResamples,
    stopping,
  };
}

function flag(value: unknown, fallback: boolean, argument: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new LetheError('E_ARG', `must be a boolean, got ${String(value)}`, argument);
  }
  return value;
}

/** JSON form of a {@link CMAESConfig}. */
export interface CMAESConfigState {
  readonly dimension: number;
  readonly populationSize: number;
  readonly sigma0: JsonNumber;
  readonly diagonal: boolean;
  readonly active: boolean;
  readonly cm: JsonNumber;
  readonly lower: JsonNumber[] | null;
  readonly upper: JsonNumber[] | null;
  /** Absent in version-2 states, which always mirrored. */
  readonly boundHandling: BoundHandling;
  readonly maxResamples: number;
  readonly stopping: Record<string, JsonNumber | boolean>;
}

/** Encodes a {@link CMAESConfig}. */
export function encodeConfig(c: CMAESConfig): CMAESConfigState {
  return {
    dimension: c.dimension,
    populationSize: c.populationSize,
    sigma0: encodeNumber(c.sigma0),
    diagonal: c.diagonal,
    active: c.active,
    cm: encodeNumber(c.cm),
    lower: c.bounds === undefined ? null : encodeArray(c.bounds.lower),
    upper: c.bounds === undefined ? null : encodeArray(c.bounds.upper),
    boundHandling: c.boundHandling,
    maxResamples: c.maxResamples,
    stopping: encodeStopping(c.stopping),
  };
}

/**
 * Decodes and re-checks a {@link CMAESConfigState} with the checks of {@link resolveOptions}.
 * `legacy`: a version-2 state, which has no `boundHandling` / `maxResamples` (it mirrored).
 *
 * @throws LetheError `E_FORMAT` naming the field at fault.
 */
export function decodeConfig(value: unknown, field: string, legacy = false): CMAESConfig {
  const s = decodeObject(value, field);
  const dimension = decodeCount(s.dimension, `${field}.dimension`, 1);
  const populationSize = decodeCount(s.populationSize, `${field}.populationSize`, 2);
  for (const key of ['boundHandling', 'maxResamples'] as const) {
    if (!legacy && s[key] === undefined) {
      throw new LetheError('E_FORMAT', 'missing', `${field}.${key}`);
    }
  }
  const bounded = s.lower !== null || s.upper !== null;
  const options = {
    sigma0: decodeNumber(s.sigma0, `${field}.sigma0`),
    populationSize,
    diagonal: s.diagonal as boolean,
    active: s.active as boolean,
    cm: decodeNumber(s.cm, `${field}.cm`),
    lower: bounded ? decodeArray(s.lower, `${field}.lower`, dimension) : undefined,
    upper: bounded ? decodeArray(s.upper, `${field}.upper`, dimension) : undefined,
    boundHandling: legacy ? 'mirror' : (s.boundHandling as BoundHandling),
    maxResamples: legacy ? DEFAULT_MAX_RESAMPLES : (s.maxResamples as number),
    stopping: decodeStopping(s.stopping, `${field}.stopping`),
  };
  try {
    return resolveConfig(options, dimension);
  } catch (error) {
    const { message, argument } = error as LetheError;
    throw new LetheError('E_FORMAT', message, `${field}.${argument}`);
  }
}
