import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import { GSA_DEFAULT_SINKS, GSA_DEFAULT_WINDOW } from '../policy/gsa-provider';

/** Budgets `L_ret` trains for unless told otherwise: the study's three cache sizes. */
export const DEFAULT_RETENTION_BUDGETS: readonly number[] = [0.5, 0.25, 0.125];

/** The budgeted caches `L_ret` ({@link retentionLoss}) scores the gate against. */
export interface RetentionOptions {
  /**
   * Cache sizes as fractions of each sequence's real length, each in (0, 1) (default
   * {@link DEFAULT_RETENTION_BUDGETS}); the term is averaged over them.
   */
  readonly budgets?: readonly number[];
  /** Sinks the cache keeps (default the policy's, 4). */
  readonly sinks?: number;
  /** Recent window the cache keeps (default the policy's, 32). */
  readonly window?: number;
  /**
   * Query rows before each sequence's first trained row scored as well (default 0: the trained
   * rows only). The rows that read the prompt's end — a question — are what SnapKV's observation
   * window scores by; their attention says which entries the answer's computation looks up.
   */
  readonly observationRows?: number;
}

/** {@link RetentionOptions} with defaults filled in. */
export interface ResolvedRetention {
  readonly budgets: readonly number[];
  readonly sinks: number;
  readonly window: number;
  readonly observationRows: number;
}

/**
 * Fills in the defaults and checks the options.
 *
 * @throws LetheError `E_ARG` naming `retention.budgets` (empty, or a budget outside (0, 1) or
 *   repeated), `retention.sinks`, `retention.window` or `retention.observationRows` (not an
 *   integer ≥ 0).
 */
export function resolveRetention(options: RetentionOptions = {}): ResolvedRetention {
  const budgets = [...(options.budgets ?? DEFAULT_RETENTION_BUDGETS)];
  if (budgets.length === 0) {
    throw new LetheError('E_ARG', 'must hold at least one budget', 'retention.budgets');
  }
  budgets.forEach((budget, i) => {
    assertFiniteInRange(budget, `retention.budgets[${i}]`);
    if (!(budget > 0 && budget < 1)) {
      throw new LetheError('E_ARG', `must be in (0, 1), got ${budget}`, `retention.budgets[${i}]`);
    }
    if (budgets.indexOf(budget) !== i) {
      throw new LetheError('E_ARG', `repeats ${budget}`, `retention.budgets[${i}]`);
    }
  });
  return {
    budgets,
    sinks: assertInteger(options.sinks ?? GSA_DEFAULT_SINKS, 'retention.sinks', 0),
    window: assertInteger(options.window ?? GSA_DEFAULT_WINDOW, 'retention.window', 0),
    observationRows: assertInteger(options.observationRows ?? 0, 'retention.observationRows', 0),
  };
}
