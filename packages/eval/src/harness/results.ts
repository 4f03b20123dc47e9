/**
 * Identifier and version of the results file format. Version 2: `config.policies` holds policy
 * specs (`{ label, name, options, dir }`) instead of names.
 */
export const RESULTS_FORMAT = 'lethe-eval-results';
export const RESULTS_VERSION = 2;

/**
 * A metric aggregated over the `n` units of one cell — its examples (accuracy, perplexity), its
 * sequences (cache metrics) or its batches (`tokensPerSecond`) — as mean ± standard error of the
 * mean. A cell has one seed; a report row pools the cells of several seeds (`poolAggregates`),
 * so its `n` is a count of units, never of seeds.
 */
export interface Aggregate {
  readonly mean: number;
  readonly stderr: number;
  readonly n: number;
}

/** One cell of a sweep: a (task, policy, budget, seed) combination. */
export interface CellKey {
  /** Task label (`taskLabel`: the registry name unless the sweep's task entry gives a label). */
  readonly task: string;
  /** Policy registry name (`full` for the full cache). */
  readonly policy: string;
  /** Cache budget as a fraction in (0, 1] of the full-cache size (1 for `full`). */
  readonly budget: number;
  /** Seed of the task examples and of sampling: an id (one of `SweepConfig.seeds`), not a count. */
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
  /**
   * Bytes of the keys and values held at that peak: `peakLive` × `kvEntryBytes` of the model (a
   * key and a value of `head_dim` float32s per entry), so models of other shapes compare (absent
   * in files written before it existed).
   */
  readonly peakKvBytes?: Aggregate;
  /** SOL net keep-rate: fraction of full-cache attention reads actually performed. */
  readonly netKeepRate?: Aggregate;
  /** Realised budget (peak / full peak) next to the requested `budget`. */
  readonly realisedBudget?: Aggregate;
  /**
   * Throughput: tokens the model ran on (prompt and fed-back generated tokens; a document's
   * `n − 1`) per clock second of that work, prefill included, over the cell's batches.
   */
  readonly tokensPerSecond: Aggregate;
}

/** The aggregate metrics every cell has (see {@link CellMetrics}). */
export const REQUIRED_METRICS = ['meanLive', 'peakLive', 'tokensPerSecond'] as const;
/** The aggregate metrics a cell has when they apply to its task or policy. */
export const OPTIONAL_METRICS = [
  'accuracy',
  'perplexity',
  'peakKvReduction',
  'peakKvBytes',
  'netKeepRate',
  'realisedBudget',
] as const;

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

/** What one teacher-forced document of a perplexity cell did. */
export interface DocumentOutcome {
  /** Index of the document within the seed. */
  readonly example: number;
  /** Σ negative log-likelihood (nats) of the tokens it predicted. */
  readonly sumNll: number;
  /** Tokens it predicted (its length − 1): its perplexity is `exp(sumNll / predicted)`. */
  readonly predicted: number;
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
  /**
   * Perplexity cells: every document's outcome, in index order — for paired comparisons (absent
   * in files written before it existed).
   */
  readonly documents?: readonly DocumentOutcome[];
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
