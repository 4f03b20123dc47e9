import { assertFiniteInRange, LetheError } from '@lethe/core';
import { type Bounds, type BoundsInput, insideBounds, resolveBounds } from './bounds';
import {
  decodeArray,
  decodeNumber,
  decodeObject,
  encodeArray,
  encodeNumber,
  type JsonNumber,
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
  /** The initial mean m₀ (its length is the dimension n); inside the bounds when given. */
  readonly x0: ArrayLike<number>;
  /**
   * σ₀, the initial step size, > 0: about a quarter to a half of the width of the region where
   * the optimum is expected (every coordinate is sampled with standard deviation σ₀ at first).
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
  readonly stopping: ResolvedStopping;
}

/**
 * Checks {@link CMAESOptions} and fills in the defaults; returns the config and x₀.
 *
 * @throws LetheError `E_ARG` naming `options` (not an object), `x0` (empty, a non-finite entry,
 * outside the bounds), `sigma0` (not finite and > 0), `populationSize`, `cm`, `diagonal`,
 * `active`, `lower`, `upper` or `stopping.<field>`; `E_SHAPE` naming `lower` / `upper` (wrong
 * length).
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
    x0[i] = v;
  }
  const sigma0 = assertFiniteInRange(options.sigma0, 'sigma0', 0);
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
  if (bounds !== undefined && !insideBounds(x0, bounds)) {
    throw new LetheError('E_ARG', 'must lie inside [lower, upper]', 'x0');
  }
  const stopping = resolveStopping(options.stopping, dimension, populationSize, sigma0);
  return {
    config: { dimension, populationSize, sigma0, diagonal, active, cm, bounds, stopping },
    x0,
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
    stopping: encodeStopping(c.stopping),
  };
}

/**
 * Decodes and re-checks a {@link CMAESConfigState}.
 *
 * @throws LetheError `E_FORMAT` naming the field at fault.
 */
export function decodeConfig(value: unknown, field: string): CMAESConfig {
  const s = decodeObject(value, field);
  const dimension = s.dimension;
  const populationSize = s.populationSize;
  if (typeof dimension !== 'number' || !Number.isSafeInteger(dimension) || dimension < 1) {
    throw new LetheError('E_FORMAT', 'not an integer ≥ 1', `${field}.dimension`);
  }
  if (
    typeof populationSize !== 'number' ||
    !Number.isSafeInteger(populationSize) ||
    populationSize < 2
  ) {
    throw new LetheError('E_FORMAT', 'not an integer ≥ 2', `${field}.populationSize`);
  }
  const sigma0 = decodeNumber(s.sigma0, `${field}.sigma0`);
  const cm = decodeNumber(s.cm, `${field}.cm`);
  if (!(sigma0 > 0 && Number.isFinite(sigma0))) {
    throw new LetheError('E_FORMAT', 'not a finite number > 0', `${field}.sigma0`);
  }
  if (!(cm > 0 && cm <= 1)) throw new LetheError('E_FORMAT', 'not in (0, 1]', `${field}.cm`);
  for (const key of ['diagonal', 'active'] as const) {
    if (typeof s[key] !== 'boolean') {
      throw new LetheError('E_FORMAT', 'not a boolean', `${field}.${key}`);
    }
  }
  let bounds: Bounds | undefined;
  if (s.lower !== null || s.upper !== null) {
    const lower = decodeArray(s.lower, `${field}.lower`, dimension);
    const upper = decodeArray(s.upper, `${field}.upper`, dimension);
    try {
      bounds = resolveBounds(lower, upper, dimension);
    } catch (error) {
      throw new LetheError('E_FORMAT', (error as Error).message, `${field}.lower`);
    }
  }
  return {
    dimension,
    populationSize,
    sigma0,
    diagonal: s.diagonal as boolean,
    active: s.active as boolean,
    cm,
    bounds,
    stopping: decodeStopping(s.stopping, `${field}.stopping`),
  };
}
