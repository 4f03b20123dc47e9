const f32 = Math.fround;

/** The float32 constants of {@link exp32}: log₂e, ln 2 split in two, the Taylor coefficients. */
const LOG2E = f32(Math.LOG2E);
const LN2_HI = 0.693145751953125; // 0x3f317200: n·LN2_HI is exact for |n| < 2¹¹
const LN2_LO = f32(Math.LN2 - LN2_HI);
const TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1, 1].map(f32);
/** Below this `exp32` returns 0 (2ⁿ would leave float32's normal range; e⁻⁸⁷ ≈ 1.6e-38). */
const EXP_FLOOR = -87;

/**
 * `eˣ` for `x ≤ 0` in float32 arithmetic, the kernel's exponential (`$exp` in
 * `attention-kernel.wat`) bit for bit: `n = ⌊x·log₂e + ½⌋`, `r = (x − n·ln2_hi) − n·ln2_lo`
 * (Cody–Waite), `p` = the degree-7 Taylor polynomial of `eʳ` in Horner form (`|r| ≤ ½ ln 2`, its
 * truncation error under 6e-9), `eˣ = p·2ⁿ`; 0 below −87. Within a few float32 ulps of `Math.exp`
 * (a test bounds it).
 */
export function exp32(x: number): number {
  if (x < EXP_FLOOR) return 0;
  const n = Math.floor(f32(f32(x * LOG2E) + 0.5));
  const r = f32(f32(x - f32(n * LN2_HI)) - f32(n * LN2_LO));
  let p = TAYLOR[0]!;
  for (let i = 1; i < TAYLOR.length; i++) p = f32(f32(p * r) + TAYLOR[i]!);
  return f32(p * 2 ** n);
}

/** One call's operands: the attention of a query group over a row of `entries` entries. */
export interface AttentionOperands {
  /** The group's queries, `[group, headDim]`. */
  readonly queries: Float32Array;
  /** `[≥ entries, headDim]`. */
  readonly keys: Float32Array;
  /** `[≥ entries, headDim]`. */
  readonly values: Float32Array;
  /** Additive logit bias per entry `[≥ entries]`, or undefined for none. */
  readonly bias: Float32Array | undefined;
  readonly entries: number;
  readonly headDim: number;
  /** Query heads in the group. */
  readonly group: number;
  /** The logit scale, a float32 (`1/√headDim`). */
  readonly scale: number;
}

/**
 * Softmax attention of each query of a group over a row of entries, in portable JavaScript with
 * the arithmetic of the SIMD kernel (`attention-kernel.wat`) bit for bit: float32 products and
 * sums (each float64 result rounded once by `Math.fround`, which for the sum or product of two
 * float32 values is the correctly rounded float32 result). For query head `g`: the score of entry
 * `j` is `(l0 + l2) + (l1 + l3)`, lane `l` summing `q_c·k_jc` over the channels `c ≡ l (mod 4)` in
 * increasing order from +0 (the last `headDim mod 4` channels fall in lanes 0–2, as in the
 * kernel's layout), times `scale`, plus `bias_j`; `m` the largest score; `e_j = exp32(score_j − m)`
 * ({@link exp32}); the output channel `c` is `(Σ_j e_j·v_jc) / Σ_j e_j`, both sums in entry order
 * from +0.
 *
 * `CacheAttention` runs this where the kernel cannot: a head dimension that is not a multiple of
 * 4, or a runtime without WebAssembly SIMD.
 *
 * @param scores scratch of at least `entries` floats.
 * @param out receives `[group, headDim]` from float `outAt` on.
 */
export function laneAttention(
  operands: AttentionOperands,
  scores: Float32Array,
  out: Float32Array,
  outAt: number,
): void {
  const { values, entries, headDim, group } = operands;
  for (let g = 0; g < group; g++) {
    const q0 = g * headDim;
    const sum = laneExponentials(operands, g, scores);
    // each channel summed in entry order from +0, in out (a float32 store rounds each sum)
    const at = outAt + q0;
    out.fill(0, at, at + headDim);
    for (let j = 0; j < entries; j++) {
      const e = scores[j]!;
      const row = j * headDim;
      for (let c = 0; c < headDim; c++) out[at + c] = out[at + c]! + f32(e * values[row + c]!);
    }
    for (let c = 0; c < headDim; c++) out[at + c] = out[at + c]! / sum;
  }
}

/**
 * Query head `g`'s softmax weights before division, with the kernel's arithmetic (see
 * {@link laneAttention}): `e_j = exp32(score_j − m)` written to `scores[0 .. entries)`.
 *
 * @returns their sum `Σ e_j`, in entry order from +0.
 */
export function laneExponentials(
  operands: Omit<AttentionOperands, 'values'>,
  g: number,
  scores: Float32Array,
): number {
  const { queries, keys, bias, entries, headDim, scale } = operands;
  const whole = headDim - (headDim % 4);
  const q0 = g * headDim;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < entries; j++) {
    const row = j * headDim;
    let l0 = 0;
    let l1 = 0;
    let l2 = 0;
    let l3 = 0;
    for (let c = 0; c < whole; c += 4) {
      l0 = f32(l0 + f32(queries[q0 + c]! * keys[row + c]!));
      l1 = f32(l1 + f32(queries[q0 + c + 1]! * keys[row + c + 1]!));
      l2 = f32(l2 + f32(queries[q0 + c + 2]! * keys[row + c + 2]!));
      l3 = f32(l3 + f32(queries[q0 + c + 3]! * keys[row + c + 3]!));
    }
    if (whole < headDim) l0 = f32(l0 + f32(queries[q0 + whole]! * keys[row + whole]!));
    if (whole + 1 < headDim) l1 = f32(l1 + f32(queries[q0 + whole + 1]! * keys[row + whole + 1]!));
    if (whole + 2 < headDim) l2 = f32(l2 + f32(queries[q0 + whole + 2]! * keys[row + whole + 2]!));
    let score = f32(f32(f32(l0 + l2) + f32(l1 + l3)) * scale);
    if (bias !== undefined) score = f32(score + bias[j]!);
    scores[j] = score;
    max = Math.max(max, score);
  }
  let sum = 0;
  for (let j = 0; j < entries; j++) {
    const e = exp32(f32(scores[j]! - max));
    scores[j] = e;
    sum = f32(sum + e);
  }
  return sum;
}

/**
 * The attention weights of one query over `entries` keys (`[≥ entries, headDim]`) with the cache
 * attention's arithmetic ({@link laneAttention}: float32 scores summed in four lanes, scale
 * `fround(1/√headDim)`, {@link exp32}, the sum in entry order), each weight divided by the sum in
 * float32: the query-window attention of the `KVCacheStore` contract, which a `KVCache`
 * observation holds (computed there by the WebAssembly SIMD kernel, the same bits).
 *
 * @param out receives the `entries` weights (scratch beyond them is not touched).
 * @example
 * ```ts
 * const weights = new Float32Array(2);
 * attentionWeights(Float32Array.of(1, 0), Float32Array.of(1, 0, 0, 1), 2, 2, weights);
 * // weights ≈ [0.670, 0.330]: softmax of [1/√2, 0]
 * ```
 */
export function attentionWeights(
  query: Float32Array,
  keys: Float32Array,
  entries: number,
  headDim: number,
  out: Float32Array,
): void {
  const operands = {
    queries: query,
    keys,
    bias: undefined,
    entries,
    headDim,
    group: 1,
    scale: f32(1 / Math.sqrt(headDim)),
  };
  const sum = laneExponentials(operands, 0, out);
  for (let j = 0; j < entries; j++) out[j] = out[j]! / sum;
}
