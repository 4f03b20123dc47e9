import { assertInteger, LetheError, Rng } from '@lethe/core';
import { GSA_DEFAULT_SINKS, GSA_DEFAULT_WINDOW } from '../policy/gsa-provider';
import type { EvictionAnchors } from './eviction-mask';

/**
 * Eviction in the loop (stage 2; this project's, not the paper's): the LM loss is taken through
 * the cache GSA will run under, each sequence's cache evicting by the gate at a budget sampled
 * for it, so the gate learns from what the hard top-B selection really keeps.
 */
export interface EvictionInLoopOptions {
  /**
   * Kept fractions of each sequence's real length, each in (0, 1] (1: the full cache); every
   * update draws one per sequence, uniformly.
   */
  readonly budgets: readonly number[];
  /** Sinks the cache keeps (default the policy's, 4). */
  readonly sinks?: number;
  /** Recent window the cache keeps (default the policy's, 32). */
  readonly window?: number;
}

/** {@link EvictionInLoopOptions} with defaults filled in. */
export interface ResolvedEviction extends EvictionAnchors {
  readonly budgets: readonly number[];
}

/**
 * Fills in the defaults and checks the options.
 *
 * @throws LetheError `E_ARG` naming `eviction` (not an object), `eviction.budgets` (empty) or
 *   `eviction.budgets[i]` (outside (0, 1] or repeated), `eviction.sinks` or `eviction.window`
 *   (not an integer ≥ 0).
 */
export function resolveEviction(options: EvictionInLoopOptions): ResolvedEviction {
  if (typeof options !== 'object' || options === null) {
    throw new LetheError('E_ARG', 'must be an object { budgets, sinks?, window? }', 'eviction');
  }
  const budgets = Array.isArray(options.budgets) ? [...options.budgets] : [];
  if (budgets.length === 0) {
    throw new LetheError('E_ARG', 'must hold at least one budget', 'eviction.budgets');
  }
  budgets.forEach((budget, i) => {
    if (!(typeof budget === 'number' && budget > 0 && budget <= 1)) {
      throw new LetheError(
        'E_ARG',
        `must be in (0, 1], got ${JSON.stringify(budget)}`,
        `eviction.budgets[${i}]`,
      );
    }
    if (budgets.indexOf(budget) !== i) {
      throw new LetheError('E_ARG', `repeats ${budget}`, `eviction.budgets[${i}]`);
    }
  });
  return {
    budgets,
    sinks: assertInteger(options.sinks ?? GSA_DEFAULT_SINKS, 'eviction.sinks', 0),
    window: assertInteger(options.window ?? GSA_DEFAULT_WINDOW, 'eviction.window', 0),
  };
}

/**
 * The budget of each of `rows` sequences at update `step` of a run seeded `seed`: drawn
 * uniformly from `budgets`, from a stream that depends only on `(seed, step)` — so a resumed run
 * draws what an uninterrupted one does.
 */
export function sampledBudgets(
  budgets: readonly number[],
  rows: number,
  seed: number | bigint,
  step: number,
): number[] {
  const rng = new Rng(seed).fork('gsa-eviction').fork(step);
  return Array.from({ length: rows }, () => budgets[rng.nextUint32() % budgets.length]!);
}
