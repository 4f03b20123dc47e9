import { requireInteger, requireNonNegative } from '../metrics/validate';
import type { CellKey, CellResult } from './results';

/** What a sweep reports after each cell (computed or found in the results file). */
export interface SweepProgress {
  /** 0-based index of the cell in the sweep order. */
  readonly index: number;
  /** Cells in the sweep. */
  readonly total: number;
  readonly key: CellKey;
  /** Whether the cell was already in the results file (and not recomputed). */
  readonly skipped: boolean;
  /** The cell's result. */
  readonly result: CellResult;
  /** Clock time since the sweep started, ms. */
  readonly elapsedMs: number;
  /**
   * Estimated clock time to finish, ms: the mean time per cell computed so far (model loading
   * and reference runs included) times the cells still to compute; `undefined` until a cell
   * has been computed in this run.
   */
  readonly etaMs: number | undefined;
}

/** Receives {@link SweepProgress} reports. */
export type ProgressCallback = (progress: SweepProgress) => void;

/**
 * ETA after `computed` cells took `elapsedMs` in total, with `remaining` cells still to compute.
 * `undefined` when nothing has been computed yet.
 *
 * @throws LetheError `E_ARG` naming the argument unless `elapsedMs` is a finite number ≥ 0 and
 *   `computed`, `remaining` are integers ≥ 0.
 */
export function estimateRemainingMs(
  elapsedMs: number,
  computed: number,
  remaining: number,
): number | undefined {
  requireNonNegative(elapsedMs, 'elapsedMs');
  requireInteger(computed, 0, 'computed');
  requireInteger(remaining, 0, 'remaining');
  if (computed === 0) return undefined;
  return (elapsedMs / computed) * remaining;
}
