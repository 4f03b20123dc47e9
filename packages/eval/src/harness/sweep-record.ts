import { cellId } from './cells';
import type { Clock } from './clock';
import { writeResultsFile } from './node-results-file';
import { estimateRemainingMs, type ProgressCallback } from './progress';
import type { CellKey, CellResult, SweepResults } from './results';
import { emptyResults } from './results-file';
import type { SweepConfig } from './sweep-config';

/**
 * The finished cells of a running sweep: adds each new one, rewrites the results file after it
 * (one write at a time, in the order cells finish) and reports progress, with the ETA from the
 * cells computed in this run.
 */
export class SweepRecord {
  private readonly finished = new Map<string, CellResult>();
  private readonly start: number;
  private computedCount = 0;
  private toCompute: number;
  private writes: Promise<void> = Promise.resolve();

  /**
   * @param sweep the validated config; `grid` its cells in sweep order.
   * @param found cells already in the results file (not recomputed).
   */
  constructor(
    private readonly sweep: SweepConfig,
    private readonly grid: readonly CellKey[],
    found: readonly CellResult[],
    private readonly options: {
      readonly resultsPath?: string;
      readonly onProgress?: ProgressCallback;
      readonly clock: Clock;
    },
  ) {
    for (const cell of found) this.finished.set(cellId(cell.key), cell);
    this.toCompute = grid.filter((key) => !this.finished.has(cellId(key))).length;
    this.start = options.clock();
  }

  /** Cells computed in this run so far. */
  get computed(): number {
    return this.computedCount;
  }

  /** The result of `key` when it is finished. */
  resultOf(key: CellKey): CellResult | undefined {
    return this.finished.get(cellId(key));
  }

  /** Reports cell `index` of the grid, found in the results file, as skipped. */
  skip(index: number, result: CellResult): void {
    this.report(index, result, true);
  }

  /** Adds a newly computed cell `index`, then writes the results file and reports it. */
  async add(index: number, result: CellResult): Promise<void> {
    this.finished.set(cellId(result.key), result);
    const { resultsPath } = this.options;
    if (resultsPath !== undefined) {
      const results = this.results();
      this.writes = this.writes.then(() => writeResultsFile(resultsPath, results));
      await this.writes;
    }
    this.computedCount += 1;
    this.toCompute -= 1;
    this.report(index, result, false);
  }

  /** Every finished cell, in sweep order. */
  results(): SweepResults {
    return {
      ...emptyResults(this.sweep),
      cells: this.grid.flatMap((key) => this.finished.get(cellId(key)) ?? []),
    };
  }

  private report(index: number, result: CellResult, skipped: boolean): void {
    const elapsedMs = this.options.clock() - this.start;
    this.options.onProgress?.({
      index,
      total: this.grid.length,
      key: result.key,
      skipped,
      result,
      elapsedMs,
      etaMs: estimateRemainingMs(elapsedMs, this.computedCount, this.toCompute),
    });
  }
}
