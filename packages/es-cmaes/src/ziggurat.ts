import type { PhiloxWords } from './philox-words';

/** Layers of the ziggurat. */
export const ZIGGURAT_LAYERS = 128;
/**
 * r: where the tail begins, the right edge of layer 1 — the root of "the 128 layers of area
 * v(r) = r·f(r) + ∫_r^∞ f close at x = 0", solved to double precision. (Marsaglia & Tsang's
 * 3.442619855899 leaves the top layer 1.2·10⁻⁹ too large.)
 */
export const ZIGGURAT_R = 3.442619855896652;
/** v = v(r): the area of every layer under f(x) = exp(−x²/2), the base layer's tail included. */
export const ZIGGURAT_V = 9.912563035336481e-3;

const LAYER_MASK = ZIGGURAT_LAYERS - 1;
const INV_2_24 = 2 ** -24;
const INV_2_32 = 2 ** -32;

/** f(x) = exp(−x²/2), the unnormalised density. */
function density(x: number): number {
  return Math.exp(-0.5 * x * x);
}

/**
 * Layer edges x₀ > x₁ = r > x₂ > … > x₁₂₇ > x₁₂₈ = 0: layer i ≥ 1 is the rectangle
 * [0, xᵢ] × [f(xᵢ), f(xᵢ₊₁)] of area v, i.e. f(xᵢ₊₁) = f(xᵢ) + v/xᵢ; the base layer 0 is
 * [0, r] × [0, f(r)] plus the tail beyond r, drawn as a rectangle of width x₀ = v/f(r).
 */
export const ZIGGURAT_X = new Float64Array(ZIGGURAT_LAYERS + 1);
/** f(xᵢ) for the {@link ZIGGURAT_X} edges (f(x₁₂₈) = 1). */
export const ZIGGURAT_F = new Float64Array(ZIGGURAT_LAYERS + 1);
/** xᵢ·2⁻²⁴: scales the 25-bit signed integer of a word to a point of layer i. */
const SCALED_X = new Float64Array(ZIGGURAT_LAYERS);
/**
 * ⌈2²⁴·xᵢ₊₁/xᵢ − ½⌉: for s the signed 25-bit integer of a word and a = s ≥ 0 ? s : −s − 1,
 * the point (s + ½)·2⁻²⁴·xᵢ lies inside layer i's core, |x| < xᵢ₊₁, exactly when a is below
 * this limit — the core test in integers, before any floating-point work.
 */
const CORE_LIMIT = new Int32Array(ZIGGURAT_LAYERS);

ZIGGURAT_X[0] = ZIGGURAT_V / density(ZIGGURAT_R);
ZIGGURAT_X[1] = ZIGGURAT_R;
for (let i = 2; i < ZIGGURAT_LAYERS; i++) {
  const x = ZIGGURAT_X[i - 1]!;
  ZIGGURAT_X[i] = Math.sqrt(-2 * Math.log(ZIGGURAT_V / x + density(x)));
}
for (let i = 0; i <= ZIGGURAT_LAYERS; i++) ZIGGURAT_F[i] = density(ZIGGURAT_X[i]!);
for (let i = 0; i < ZIGGURAT_LAYERS; i++) {
  SCALED_X[i] = ZIGGURAT_X[i]! * INV_2_24;
  CORE_LIMIT[i] = Math.ceil((ZIGGURAT_X[i + 1]! / ZIGGURAT_X[i]!) * 2 ** 24 - 0.5);
}

/** A uniform in (0, 1) from one word: (w + ½)·2⁻³². */
function open01(word: number): number {
  return ((word >>> 0) + 0.5) * INV_2_32;
}

/** |z| beyond r (Marsaglia 1964): r + a with a = −ln(u₁)/r, accepted when −2 ln(u₂) > a². */
function tail(words: PhiloxWords, negative: boolean): number {
  let a: number;
  let b: number;
  do {
    a = -Math.log(open01(words.next())) / ZIGGURAT_R;
    b = -Math.log(open01(words.next()));
  } while (b + b < a * a);
  return negative ? -ZIGGURAT_R - a : ZIGGURAT_R + a;
}

/** Layer i's point from a word: (s + ½)·2⁻²⁴·xᵢ for the word's upper 25 bits s (signed). */
function point(word: number, layer: number): number {
  return ((word >> 7) + 0.5) * SCALED_X[layer]!;
}

/** Whether the word's point lies in the core of layer i, |x| < xᵢ₊₁ (in integers). */
function inCore(word: number, layer: number): boolean {
  const s = word >> 7;
  return (s ^ (s >> 31)) < CORE_LIMIT[layer]!;
}

/**
 * Completes a draw whose first word gave layer i and a point x outside the layer's core
 * (|x| ≥ xᵢ₊₁): the tail for the base layer; for layer i ≥ 1, x when a uniform height in
 * [f(xᵢ), f(xᵢ₊₁)] lies below f(x), otherwise a new draw from the next words.
 */
function completeDraw(words: PhiloxWords, layer: number, x: number): number {
  for (;;) {
    if (layer === 0) return tail(words, x < 0);
    const f0 = ZIGGURAT_F[layer]!;
    if (f0 + open01(words.next()) * (ZIGGURAT_F[layer + 1]! - f0) < density(x)) return x;
    const w = words.next();
    layer = w & LAYER_MASK;
    x = point(w, layer);
    if (inCore(w, layer)) return x;
  }
}

/**
 * Fills `out` with exact N(0, 1) draws by the ziggurat method (Marsaglia & Tsang 2000, with
 * independent bits for the layer and the point as in Doornik's ZIGNOR): a word's low 7 bits
 * pick layer i, its upper 25 bits, as a signed integer s, the point x = (s + ½)·2⁻²⁴·xᵢ in
 * (−xᵢ, xᵢ). x is the draw when |x| < xᵢ₊₁ — 97.2 % of draws, one word each (1.04 words per
 * draw on average). Otherwise the base layer draws from the tail, and a layer i ≥ 1 accepts x
 * when a uniform height in [f(xᵢ), f(xᵢ₊₁)] lies below f(x), else starts over with the next
 * word.
 *
 * Reads the words in order from the current position of `words` (leaving the rest buffered).
 */
export function fillStandardNormal(out: Float64Array, words: PhiloxWords): void {
  const buffer = words.buffer;
  const length = out.length;
  let i = 0;
  while (i < length) {
    if (words.position === words.end) words.refill();
    let position = words.position;
    // Every draw reads at least one word: read no further than the draws still to make.
    const stop = Math.min(words.end, position + length - i);
    while (position < stop) {
      const w = buffer[position++]!;
      const layer = w & LAYER_MASK;
      if (inCore(w, layer)) {
        out[i++] = point(w, layer);
      } else {
        words.position = position;
        out[i++] = completeDraw(words, layer, point(w, layer));
        position = words.position;
        break;
      }
    }
    words.position = position;
  }
}
