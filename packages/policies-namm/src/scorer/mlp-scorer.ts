import { LetheError } from '@lethe/core';
import { scorerParameterCount, unpackGenome } from './genome-layout';
import { checkScoreArguments } from './score-arguments';
import type { Scorer } from './scorer';
import type { MlpScorerSpec } from './scorer-spec';

/**
 * The MLP scorer of NAMM (Cetin et al., ICLR 2025, Table 9: hidden width = input width, 2 hidden
 * layers, residual connections, ReLU): with x_i ∈ R^F the features of entry i and depth D,
 *
 * ```text
 * h_0 = x_i,  h_l = h_{l−1} + relu(W_l h_{l−1} + b_l)   (l = 1, …, D; W_l is F × F)
 * s_i = w · h_D + b
 * ```
 *
 * Every entry is scored on its own (no cross-token interaction), so permuting the entries
 * permutes the scores. Genome layout: see {@link describeGenome}. Cost O(n·D·F²) per call;
 * arithmetic is float64 throughout.
 */
export class MlpScorer implements Scorer {
  readonly spec: MlpScorerSpec;
  readonly parameterCount: number;
  /** W_l [F, F] for l = 1..D. */
  private readonly weights: Float64Array[] = [];
  /** b_l [F] for l = 1..D. */
  private readonly biases: Float64Array[] = [];
  private readonly w: Float64Array;
  private readonly b: number;
  /** h_l of the entry being scored. */
  private readonly h: Float64Array;
  /** relu(W_l h_{l−1} + b_l) of the entry being scored. */
  private readonly z: Float64Array;

  /**
   * @param spec - `kind: 'mlp'`, the feature width F and depth D.
   * @param genome - the parameters in {@link describeGenome}'s layout; copied.
   * @throws LetheError `E_ARG` naming `spec.kind` (not `'mlp'`), `spec.features` or
   *   `spec.depth` (not positive integers), or `genome` (wrong length, NaN or ±∞).
   */
  constructor(spec: MlpScorerSpec, genome: Float64Array | Float32Array) {
    if (spec.kind !== 'mlp')
      throw new LetheError('E_ARG', `must be 'mlp', got ${spec.kind}`, 'spec.kind');
    const blocks = unpackGenome(spec, genome);
    this.spec = { kind: 'mlp', features: spec.features, depth: spec.depth };
    this.parameterCount = scorerParameterCount(spec);
    for (let l = 1; l <= spec.depth; l++) {
      this.weights.push(blocks[`W${l}`]!);
      this.biases.push(blocks[`b${l}`]!);
    }
    this.w = blocks.w!;
    this.b = blocks.b![0]!;
    this.h = new Float64Array(spec.features);
    this.z = new Float64Array(spec.features);
  }

  /**
   * Scores a head's n live entries (see {@link Scorer.score}).
   *
   * @throws LetheError `E_ARG` naming `n`, `E_SHAPE` naming `x` or `out`.
   */
  score(x: Float32Array, n: number, out: Float32Array): void {
    const f = this.spec.features;
    checkScoreArguments(f, x, n, out);
    const { weights, biases, w, h, z } = this;
    for (let i = 0; i < n; i++) {
      const xo = i * f;
      for (let c = 0; c < f; c++) h[c] = x[xo + c]!;
      for (let l = 0; l < weights.length; l++) {
        const wl = weights[l]!;
        const bl = biases[l]!;
        for (let r = 0; r < f; r++) {
          const ro = r * f;
          let s = bl[r]!;
          for (let c = 0; c < f; c++) s += wl[ro + c]! * h[c]!;
          z[r] = Math.max(s, 0);
        }
        for (let r = 0; r < f; r++) h[r] = h[r]! + z[r]!;
      }
      let score = this.b;
      for (let c = 0; c < f; c++) score += w[c]! * h[c]!;
      out[i] = score;
    }
  }
}
