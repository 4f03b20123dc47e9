import { LetheError } from '@lethe/core';
import { BamKernel } from './bam-kernel';
import { scorerParameterCount, unpackGenome } from './genome-layout';
import { checkScoreArguments } from './score-arguments';
import type { Scorer } from './scorer';
import type { BamScorerSpec } from './scorer-spec';
import { softmaxTail } from './softmax-tail';

/**
 * Rows (entries i) processed together, so that each k_j and v_j is loaded once per block rather
 * than once per row. The block code is written out for exactly 4 rows.
 */
const BLOCK = 4;

/** Options of a {@link BamScorer}. */
export interface BamScorerOptions {
  /**
   * Score with the WebAssembly SIMD kernel where it runs (default true): the same bits as the
   * portable form, 2.5–5× faster at 256–4,096 entries (`npm run bench:scorer`). `false` always
   * runs the portable form.
   */
  readonly kernel?: boolean;
}

/**
 * The backward-attention memory (BAM) scorer of NAMM (Cetin et al., ICLR 2025, §3.2 and App. A.2):
 * one self-attention layer with a counter-causal ("backward") mask over a head's live entries,
 * residual and multiplicative interactions with the input, and a final linear score. With
 * x_i ∈ R^F the features of entry i (oldest first) and hidden width H:
 *
 * ```text
 * q_i = Wq x_i + bq,  k_i = Wk x_i + bk,  v_i = Wv x_i + bv                  (R^H)
 * a_ij = softmax over j ∈ {i, …, n−1} of (q_i · k_j) / √H     (row max subtracted)
 * u_i = Σ_{j ≥ i} a_ij v_j                                                   (R^H)
 * o_i = Wo u_i + bo (R^2F),  res_i = o_i[0:F],  m_i = o_i[F:2F]
 * y_i = x_i ⊙ (1 + m_i) + res_i
 * s_i = w · y_i + b
 * ```
 *
 * Entry i attends to itself and the newer entries only, so s_i does not depend on the older
 * entries at all, bit for bit, whatever they hold: an old token can lose its place to a newer
 * duplicate, never the reverse, and the newest entry is scored as if it were alone.
 *
 * H is 32 by default ({@link DEFAULT_BAM_HIDDEN}, as in the reference code's runs); the paper's
 * Table 9 gives 16. Genome layout: see {@link describeGenome}. Cost O(n²H) per call, computed
 * four rows at a time; arithmetic is float64 throughout (scores rounded to float32 on output),
 * by a WebAssembly SIMD kernel where one runs (`bam-kernel.wat`: the same operations in the same
 * order, so the same bits) and else by the portable code below.
 * NaN features give NaN scores; ±∞ scores need parameters extreme enough to overflow float64.
 */
export class BamScorer implements Scorer {
  readonly spec: BamScorerSpec;
  readonly parameterCount: number;
  private readonly wq: Float64Array;
  private readonly bq: Float64Array;
  private readonly wk: Float64Array;
  private readonly bk: Float64Array;
  private readonly wv: Float64Array;
  private readonly bv: Float64Array;
  private readonly wo: Float64Array;
  private readonly bo: Float64Array;
  private readonly w: Float64Array;
  private readonly b: number;
  /** The WebAssembly SIMD form of the arithmetic below, where it runs. */
  private readonly kernel: BamKernel | undefined;
  /** u of the block's rows, [BLOCK, H]. */
  private readonly u: Float64Array;
  /** 1 / Σ_j exp(logit_j − max) of the block's rows. */
  private readonly inverseSums = new Float64Array(BLOCK);
  /** Entries the scratch below has room for (and its row stride). */
  private capacity = 0;
  /** Queries [capacity + BLOCK − 1, H], already divided by √H; rows from n on are 0. */
  private q = new Float64Array(0);
  /** Keys [capacity, H]. */
  private k = new Float64Array(0);
  /** Values transposed, [H, capacity]: v_j[h] at `h · capacity + j`. */
  private vt = new Float64Array(0);
  /** The block's logits, then exp(logit − max), [BLOCK, capacity]. */
  private p = new Float64Array(0);

  /**
   * @param spec - `kind: 'bam'`, the feature width F and hidden width H.
   * @param genome - the parameters in {@link describeGenome}'s layout; copied.
   * @throws LetheError `E_ARG` naming `spec.kind` (not `'bam'`), `spec.features` or
   *   `spec.hidden` (not positive integers), or `genome` (wrong length, NaN or ±∞).
   */
  constructor(
    spec: BamScorerSpec,
    genome: Float64Array | Float32Array,
    options: BamScorerOptions = {},
  ) {
    if (spec.kind !== 'bam')
      throw new LetheError('E_ARG', `must be 'bam', got ${spec.kind}`, 'spec.kind');
    const blocks = unpackGenome(spec, genome);
    this.spec = { kind: 'bam', features: spec.features, hidden: spec.hidden };
    this.parameterCount = scorerParameterCount(spec);
    this.wq = blocks.Wq!;
    this.bq = blocks.bq!;
    this.wk = blocks.Wk!;
    this.bk = blocks.bk!;
    this.wv = blocks.Wv!;
    this.bv = blocks.bv!;
    this.wo = blocks.Wo!;
    this.bo = blocks.bo!;
    this.w = blocks.w!;
    this.b = blocks.b![0]!;
    this.u = new Float64Array(BLOCK * spec.hidden);
    this.kernel =
      options.kernel === false
        ? undefined
        : BamKernel.load(spec.features, spec.hidden, {
            Wq: this.wq,
            bq: this.bq,
            Wk: this.wk,
            bk: this.bk,
            Wv: this.wv,
            bv: this.bv,
            Wo: this.wo,
            bo: this.bo,
            w: this.w,
            b: this.b,
          });
  }

  /**
   * Scores a head's n live entries (see {@link Scorer.score}).
   *
   * @throws LetheError `E_ARG` naming `n`, `E_SHAPE` naming `x` or `out`.
   */
  score(x: Float32Array, n: number, out: Float32Array): void {
    checkScoreArguments(this.spec.features, x, n, out);
    if (n === 0) return;
    if (this.kernel !== undefined) {
      this.kernel.score(x, n, out);
      return;
    }
    this.reserve(n);
    this.project(x, n);
    for (let i0 = 0; i0 < n; i0 += BLOCK) {
      const rows = Math.min(BLOCK, n - i0);
      this.blockLogits(i0, n);
      for (let r = 0; r < BLOCK; r++)
        this.inverseSums[r] =
          r < rows ? softmaxTail(this.p, r * this.capacity + i0 + r, r * this.capacity + n) : 0;
      this.blockMix(i0, n);
      for (let r = 0; r < rows; r++) out[i0 + r] = this.readout(x, i0 + r, r);
    }
  }

  /**
   * Logits q_i · k_j / √H of the block's rows i = i0 … i0 + BLOCK − 1 against every j ≥ i0 (those
   * with j < i are computed but never read). Each k_j is loaded once for the whole block.
   */
  private blockLogits(i0: number, n: number): void {
    const { q, k, p } = this;
    const hidden = this.spec.hidden;
    const stride = this.capacity;
    const q0 = i0 * hidden;
    const q1 = q0 + hidden;
    const q2 = q1 + hidden;
    const q3 = q2 + hidden;
    for (let j = i0; j < n; j++) {
      const ko = j * hidden;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let h = 0; h < hidden; h++) {
        const kh = k[ko + h]!;
        s0 += q[q0 + h]! * kh;
        s1 += q[q1 + h]! * kh;
        s2 += q[q2 + h]! * kh;
        s3 += q[q3 + h]! * kh;
      }
      p[j] = s0;
      p[stride + j] = s1;
      p[2 * stride + j] = s2;
      p[3 * stride + j] = s3;
    }
  }

  /**
   * u of the block's rows: Σ_{j ≥ i} exp(…)_ij v_j / sum_i. The triangle j < i0 + BLOCK − 1 goes
   * row by row so that no row ever touches an older entry's value; beyond it each v_j is loaded
   * once for the whole block.
   */
  private blockMix(i0: number, n: number): void {
    const { p, vt, u, inverseSums } = this;
    const hidden = this.spec.hidden;
    const stride = this.capacity;
    const p1 = stride;
    const p2 = 2 * stride;
    const p3 = 3 * stride;
    const triangleEnd = Math.min(i0 + BLOCK - 1, n);
    for (let h = 0; h < hidden; h++) {
      const vo = h * stride;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let j = i0; j < triangleEnd; j++) {
        const v = vt[vo + j]!;
        s0 += p[j]! * v;
        if (j > i0) s1 += p[p1 + j]! * v;
        if (j > i0 + 1) s2 += p[p2 + j]! * v;
      }
      for (let j = triangleEnd; j < n; j++) {
        const v = vt[vo + j]!;
        s0 += p[j]! * v;
        s1 += p[p1 + j]! * v;
        s2 += p[p2 + j]! * v;
        s3 += p[p3 + j]! * v;
      }
      u[h] = s0 * inverseSums[0]!;
      u[hidden + h] = s1 * inverseSums[1]!;
      u[2 * hidden + h] = s2 * inverseSums[2]!;
      u[3 * hidden + h] = s3 * inverseSums[3]!;
    }
  }

  /** s_i = w · (x_i ⊙ (1 + m_i) + res_i) + b with o_i = Wo u_i + bo, u_i in row r of u. */
  private readout(x: Float32Array, i: number, r: number): number {
    const { wo, bo, w, u } = this;
    const f = this.spec.features;
    const hidden = this.spec.hidden;
    const uo = r * hidden;
    const xo = i * f;
    let score = this.b;
    for (let c = 0; c < f; c++) {
      const ro = c * hidden;
      const mo = (f + c) * hidden;
      let res = bo[c]!;
      let m = bo[f + c]!;
      for (let h = 0; h < hidden; h++) {
        res += wo[ro + h]! * u[uo + h]!;
        m += wo[mo + h]! * u[uo + h]!;
      }
      score += w[c]! * (x[xo + c]! * (1 + m) + res);
    }
    return score;
  }

  /** Grows the scratch to hold at least n entries (doubling, so growth is amortised). */
  private reserve(n: number): void {
    if (n <= this.capacity) return;
    const capacity = Math.max(n, 2 * this.capacity);
    const hidden = this.spec.hidden;
    this.q = new Float64Array((capacity + BLOCK - 1) * hidden);
    this.k = new Float64Array(capacity * hidden);
    this.vt = new Float64Array(capacity * hidden);
    this.p = new Float64Array(BLOCK * capacity);
    this.capacity = capacity;
  }

  /** q_i / √H, k_i and v_i of every entry; q rows n … n + BLOCK − 2 set to 0. */
  private project(x: Float32Array, n: number): void {
    const f = this.spec.features;
    const hidden = this.spec.hidden;
    const scale = 1 / Math.sqrt(hidden);
    const { q, k, vt, wq, bq, wk, bk, wv, bv } = this;
    const stride = this.capacity;
    for (let i = 0; i < n; i++) {
      const xo = i * f;
      for (let h = 0; h < hidden; h++) {
        const wo = h * f;
        let sq = bq[h]!;
        let sk = bk[h]!;
        let sv = bv[h]!;
        for (let c = 0; c < f; c++) {
          const xc = x[xo + c]!;
          sq += wq[wo + c]! * xc;
          sk += wk[wo + c]! * xc;
          sv += wv[wo + c]! * xc;
        }
        q[i * hidden + h] = sq * scale;
        k[i * hidden + h] = sk;
        vt[h * stride + i] = sv;
      }
    }
    q.fill(0, n * hidden, (n + BLOCK - 1) * hidden);
  }
}
