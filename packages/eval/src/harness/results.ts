/**
 * Identifier and version of the results file format. Version 2: `config.policies` holds policy
 * specs (`{ label, name, options, dir }`) instead of names.
 */
export const RESULTS_FORMAT = 'lethe-eval-results';
export const RESULTS_VERSION = 2;

/** A metric aggregated over prompts and seeds: mean ± standard error of the mean over `n`. */
export interface Aggregate {
  readonly mean: number;
  readonly stderr: number;
  readonly n: number;
}

/** One cell of a sweep: a (task, policy, budget, seed) combination. */
export interface CellKey {
  /** Task registry name. */
  readonly task: string;
  /** Policy registry name (`full` for the full cache). */
  readonly policy: string;
  /** Cache budget as a fraction in (0, 1] of the full-cache size (1 for `full`). */
  readonly budget: number;
  /** Seed of the task examples and of sampling. */
  readonly seed: number;
}

/** Metrics of one cell. Optional fields appear when they apply to the task or policy. */
export interface CellMetrics {
  /** Fraction of examples solved exactly (generation tasks). */
  readonly accuracy?: Aggregate;
  /** Unbiased pass@k for each k evaluated (generation tasks with several samples). */
  readonly passAtK?: Readonly<Record<string, number>>;
  /** Teacher-forced perplexity (language modelling). */
  readonly perplexity?: Aggregate;
  /**
   * NGC eq. 7 average peak KV cache reduction: mean over examples of full-cache peak / policy
   * peak (a factor: 2 = half the peak memory; 1 for the full cache). See `peakKvReduction`.
   */
  readonly peakKvReduction?: Aggregate;
  /** Mean live KV entries over decode steps (summed over layers and heads). */
  readonly meanLive: Aggregate;
  /** Peak live KV entries (summed over layers and heads). */
  readonly peakLive: Aggregate;
  /** SOL net keep-rate: fraction of full-cache attention reads actually performed. */
  readonly netKeepRate?: Aggregate;
  /** Realised budget (peak / full peak) next to the requested `budget`. */
  readonly realisedBudget?: Aggregate;
  /** Decode throughput. */
  readonly tokensPerSecond: Aggregate;
}

/** What one generated sequence of a generation cell did. */
export interface SequenceOutcome {
  /** Index of its example within the seed (sample `j` of example `i` is sequence `i · S + j`). */
  readonly example: number;
  /** Whether the task's verifier accepted its completion. */
  readonly correct: boolean;
  /** Most KV entries its cache held at once, summed over layers and KV heads. */
  readonly peakTotal: number;
  /** Tokens it generated. */
  readonly generated: number;
}

/** The result of one cell, with the command that reproduces it. */
export interface CellResult {
  readonly key: CellKey;
  readonly metrics: CellMetrics;
  /**
   * Generation cells: every sequence's outcome, in plan order — for paired comparisons between
   * policies on the same examples (absent in files written before it existed).
   */
  readonly sequences?: readonly SequenceOutcome[];
  /** A `lethe eval …` command that recomputes exactly this cell. */
  readonly command: string;
  /** Wall time of the cell, ms. */
  readonly elapsedMs: number;
}

/** A whole sweep: format header, the full configuration, and finished cells. */
export interface SweepResults {
  readonly format: typeof RESULTS_FORMAT;
  readonly version: typeof RESULTS_VERSION;
  /** The sweep configuration as given (validated), so results are self-describing. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly cells: readonly CellResult[];
}
