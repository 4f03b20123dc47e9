import { unpackGenome } from './genome-layout';
import type { BamScorerSpec, MlpScorerSpec, ScorerSpec } from './scorer-spec';

/**
 * The magnitude every value a scorer computes must stay below: 2^127, half of float32's largest
 * finite value (≈ 3.4·10^38). Scores are written to a `Float32Array`; the factor 2 absorbs the
 * rounding of the float64 arithmetic and of the float32 features, so a genome whose
 * {@link scorerMagnitudeBound} is below it never scores ±∞ or NaN on features in range.
 */
export const SCORE_MAGNITUDE_LIMIT = 2 ** 127;

/**
 * An upper bound on the magnitude of every value a scorer computes — BAM's projections, logits,
 * outputs and mixed inputs, the MLP's hidden layers, and the score — for any number of entries
 * whose features all lie within `±inputBound`. Interval arithmetic: `|b + Σ_c W_c·x_c| ≤ |b| +
 * Σ_c |W_c|·X_c`, a softmax average lies within the range of what it averages, `relu(z) ≤ |z|`.
 * It is conservative (it may exceed every value the scorer can reach); an overflow in the bound
 * itself gives ∞ or NaN.
 *
 * @param genome the parameters in `describeGenome`'s layout.
 * @throws LetheError as `unpackGenome` (a bad spec, a genome of the wrong length or non-finite).
 */
export function scorerMagnitudeBound(
  spec: ScorerSpec,
  genome: Float64Array | Float32Array,
  inputBound: number,
): number {
  const blocks = unpackGenome(spec, genome);
  const inputs = new Float64Array(spec.features).fill(inputBound);
  return spec.kind === 'bam' ? bamBound(spec, blocks, inputs) : mlpBound(spec, blocks, inputs);
}

/** Bounds of `W x + b` for `x` within `±inputs` (W row-major, `[bias.length, inputs.length]`). */
function affineBound(
  weights: Float64Array,
  bias: Float64Array,
  inputs: Float64Array,
): Float64Array {
  const columns = inputs.length;
  return bias.map((b, r) => {
    let sum = Math.abs(b);
    for (let c = 0; c < columns; c++) sum += Math.abs(weights[r * columns + c]!) * inputs[c]!;
    return sum;
  });
}

/** The largest of `values` (NaN when one is NaN, as `Math.max`). */
function largest(...values: (Float64Array | number)[]): number {
  return Math.max(...values.flatMap((value) => (typeof value === 'number' ? value : [...value])));
}

function bamBound(
  spec: BamScorerSpec,
  p: Record<string, Float64Array>,
  inputs: Float64Array,
): number {
  const f = spec.features;
  const q = affineBound(p.Wq!, p.bq!, inputs);
  const k = affineBound(p.Wk!, p.bk!, inputs);
  const v = affineBound(p.Wv!, p.bv!, inputs);
  const logits = q.reduce((sum, qh, h) => sum + qh * k[h]!, 0) / Math.sqrt(spec.hidden);
  // u_i averages the values v_j with softmax weights: within v's bounds.
  const o = affineBound(p.Wo!, p.bo!, v);
  const y = inputs.map((x, c) => x * (1 + o[f + c]!) + o[c]!);
  const score = affineBound(p.w!, p.b!, y);
  return largest(q, k, v, logits, o, y, score);
}

function mlpBound(
  spec: MlpScorerSpec,
  p: Record<string, Float64Array>,
  inputs: Float64Array,
): number {
  let h = inputs;
  let max = largest(h);
  for (let l = 1; l <= spec.depth; l++) {
    const z = affineBound(p[`W${l}`]!, p[`b${l}`]!, h);
    h = h.map((x, r) => x + z[r]!);
    max = largest(max, z, h);
  }
  return largest(max, affineBound(p.w!, p.b!, h));
}
