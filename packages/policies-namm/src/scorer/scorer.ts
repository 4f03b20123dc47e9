import { BamScorer } from './bam-scorer';
import { MlpScorer } from './mlp-scorer';
import { checkScorerSpec, type ScorerSpec } from './scorer-spec';

/**
 * A NAMM scorer with fixed parameters: scores every live entry of one KV head from its feature
 * vector; an entry scoring below 0 is evicted. One scorer serves every layer and head.
 */
export interface Scorer {
  /** The network and its sizes. */
  readonly spec: ScorerSpec;
  /** The genome length, {@link scorerParameterCount}(spec). */
  readonly parameterCount: number;
  /**
   * Scores a head's `n` live entries.
   *
   * @param x - the feature vectors, `[n, F]` row-major (entry i at `x[i·F .. i·F + F)`),
   *   ordered oldest first (increasing token position); only the first n·F numbers are read.
   * @param n - the number of entries, ≥ 0.
   * @param out - receives the score of entry i at `out[i]`; only the first n are written.
   * @throws LetheError `E_ARG` naming `n` (not a non-negative integer), `E_SHAPE` naming `x`
   *   (shorter than n·F) or `out` (shorter than n).
   */
  score(x: Float32Array, n: number, out: Float32Array): void;
}

/**
 * Builds the scorer a spec describes, with the parameters in `genome` (copied; see
 * {@link describeGenome} for the layout). Scratch buffers are reused across calls and grow with
 * the largest n seen, so a scorer is cheap to call every eviction round but not re-entrant.
 *
 * @throws LetheError `E_ARG` naming `spec.kind`, `spec.features`, `spec.hidden` or
 *   `spec.depth` for a bad spec, or `genome` when its length is wrong or it holds NaN or ±∞.
 */
export function createScorer(spec: ScorerSpec, genome: Float64Array | Float32Array): Scorer {
  checkScorerSpec(spec);
  return spec.kind === 'bam' ? new BamScorer(spec, genome) : new MlpScorer(spec, genome);
}
