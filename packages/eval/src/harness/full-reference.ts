import { requireFunction } from './arguments';
import type { GenerationRun } from './generation-run';

/**
 * Memo of full-cache generation runs per (task, seed). The full cache's peaks are the
 * denominators of every cell's peak metrics, and the `full` cell's results themselves, so a
 * sweep computes them once per (task, seed) and every cell of that pair reuses them. The runs
 * are deterministic, so a resumed sweep that recomputes them gets the same numbers.
 */
export class FullCacheReferences {
  private readonly runs = new Map<string, Promise<GenerationRun>>();

  /**
   * The run of (task, seed), computed by `compute` on first use. A failed (or aborted)
   * computation is forgotten, so a later call tries again.
   *
   * @throws LetheError `E_ARG` naming `compute` when it is not a function.
   */
  get(task: string, seed: number, compute: () => Promise<GenerationRun>): Promise<GenerationRun> {
    requireFunction(compute, 'compute', 'a function computing the run');
    const id = JSON.stringify([task, seed]);
    let run = this.runs.get(id);
    if (run === undefined) {
      run = compute();
      this.runs.set(id, run);
      run.catch(() => {
        if (this.runs.get(id) === run) this.runs.delete(id);
      });
    }
    return run;
  }

  /** Forgets every run (e.g. when a sweep moves on to the next task). */
  clear(): void {
    this.runs.clear();
  }
}
