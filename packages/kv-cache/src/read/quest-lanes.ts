import type { QuestInputs } from './quest-inputs';

const f32 = Math.fround;

/** `q·max_c` if `q ≥ 0`, else `q·min_c`, rounded to float32: channel `c`'s term of the bound. */
function term(q: number, min: Float32Array, max: Float32Array, at: number): number {
  return f32(q * (q >= 0 ? max[at] : min[at]));
}

/**
 * Quest's page scores in portable JavaScript, with the arithmetic of the SIMD kernel
 * (`quest-kernel.wat`) bit for bit: float32 products and sums (each float64 result rounded once
 * with `Math.fround`, which for a sum or product of two float32 values is the correctly rounded
 * float32 result). For page `p` and query head `g`, lane `l` (0–3) sums, from +0, over the
 * channels `c ≡ l (mod 4)` in increasing order, the term `q_c·max_c` if `q_c ≥ 0` else
 * `q_c·min_c` (the kernel adds `qp·max + qn·min` with `qp`, `qn` the query's non-negative and
 * negative parts: the same term plus a signed zero, and adding a zero never changes a lane,
 * which starts at +0 and so is never −0). The head's score is `(l0 + l2) + (l1 + l3)`; the
 * group's heads combine in order by max (from −∞) or by sum (from 0).
 *
 * `questPageScores` runs this where the kernel cannot: a head dimension that is not a multiple
 * of 4, or a runtime without WebAssembly SIMD. Returns `[endPage − firstPage]`.
 */
export function laneQuestScores(inputs: QuestInputs, useMax: boolean): Float32Array {
  const { bounds, queries, group, firstPage, endPage } = inputs;
  const headDim = queries.length / group;
  const whole = headDim - (headDim % 4);
  const { min, max } = bounds;
  const scores = new Float32Array(endPage - firstPage);
  for (let p = firstPage; p < endPage; p++) {
    const row = p * headDim;
    let combined = useMax ? Number.NEGATIVE_INFINITY : 0;
    for (let q0 = 0; q0 < queries.length; q0 += headDim) {
      let l0 = 0;
      let l1 = 0;
      let l2 = 0;
      let l3 = 0;
      for (let c = 0; c < whole; c += 4) {
        l0 = f32(l0 + term(queries[q0 + c], min, max, row + c));
        l1 = f32(l1 + term(queries[q0 + c + 1], min, max, row + c + 1));
        l2 = f32(l2 + term(queries[q0 + c + 2], min, max, row + c + 2));
        l3 = f32(l3 + term(queries[q0 + c + 3], min, max, row + c + 3));
      }
      // the last headDim mod 4 channels, in lanes 0, 1, 2
      if (whole < headDim) l0 = f32(l0 + term(queries[q0 + whole], min, max, row + whole));
      if (whole + 1 < headDim)
        l1 = f32(l1 + term(queries[q0 + whole + 1], min, max, row + whole + 1));
      if (whole + 2 < headDim)
        l2 = f32(l2 + term(queries[q0 + whole + 2], min, max, row + whole + 2));
      const score = f32(f32(l0 + l2) + f32(l1 + l3));
      combined = useMax ? Math.max(combined, score) : f32(combined + score);
    }
    scores[p - firstPage] = combined;
  }
  return scores;
}
