import {
  GELU_CUBIC,
  GELU_SQRT_2_OVER_PI,
  INPUT_RMS_EPS,
  LAYER_NORM_EPS,
} from './controller-constants';

/** A torch `Linear` on typed arrays: `weight` `[rows, cols]` row-major, `bias` `[rows]` or none. */
export interface DenseLayer {
  readonly weight: Float32Array;
  readonly bias: Float32Array | undefined;
  readonly rows: number;
  readonly cols: number;
}

/**
 * `out[outOffset + r] = bias[r] + Σ_c weight[r·cols + c] · input[inputOffset + c]` for every row
 * `r` of `layer`. With `accumulate`, the result is added to `out` instead of replacing it (a
 * residual connection).
 *
 * Four rows at a time, two columns per iteration: each input value is read once per four rows
 * and the add chains are short (~1.7× a row-by-row loop here). The summation order is fixed, so
 * results are reproducible.
 */
export function linearInto(
  layer: DenseLayer,
  input: Float32Array,
  inputOffset: number,
  out: Float32Array,
  outOffset: number,
  accumulate = false,
): void {
  const { weight, bias, rows, cols } = layer;
  const even = cols - (cols & 1);
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const w0 = r * cols;
    const w1 = w0 + cols;
    const w2 = w1 + cols;
    const w3 = w2 + cols;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let b0 = 0;
    let b1 = 0;
    let b2 = 0;
    let b3 = 0;
    for (let c = 0; c < even; c += 2) {
      const u = input[inputOffset + c]!;
      const v = input[inputOffset + c + 1]!;
      a0 += weight[w0 + c]! * u;
      a1 += weight[w1 + c]! * u;
      a2 += weight[w2 + c]! * u;
      a3 += weight[w3 + c]! * u;
      b0 += weight[w0 + c + 1]! * v;
      b1 += weight[w1 + c + 1]! * v;
      b2 += weight[w2 + c + 1]! * v;
      b3 += weight[w3 + c + 1]! * v;
    }
    if (even < cols) {
      const u = input[inputOffset + even]!;
      a0 += weight[w0 + even]! * u;
      a1 += weight[w1 + even]! * u;
      a2 += weight[w2 + even]! * u;
      a3 += weight[w3 + even]! * u;
    }
    store(out, outOffset + r, a0 + b0 + (bias === undefined ? 0 : bias[r]!), accumulate);
    store(out, outOffset + r + 1, a1 + b1 + (bias === undefined ? 0 : bias[r + 1]!), accumulate);
    store(out, outOffset + r + 2, a2 + b2 + (bias === undefined ? 0 : bias[r + 2]!), accumulate);
    store(out, outOffset + r + 3, a3 + b3 + (bias === undefined ? 0 : bias[r + 3]!), accumulate);
  }
  for (; r < rows; r++) {
    const base = r * cols;
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += weight[base + c]! * input[inputOffset + c]!;
    store(out, outOffset + r, sum + (bias === undefined ? 0 : bias[r]!), accumulate);
  }
}

function store(out: Float32Array, index: number, value: number, accumulate: boolean): void {
  out[index] = accumulate ? out[index]! + value : value;
}

/**
 * Writes `x / √(mean(x²) + ε)` (no learned scale, ε = {@link INPUT_RMS_EPS}) into `out` at
 * `offset`.
 */
export function rmsNormalizeInto(x: Float32Array, out: Float32Array, offset: number): void {
  let squares = 0;
  for (let i = 0; i < x.length; i++) squares += x[i]! * x[i]!;
  const scale = 1 / Math.sqrt(squares / x.length + INPUT_RMS_EPS);
  for (let i = 0; i < x.length; i++) out[offset + i] = x[i]! * scale;
}

/** A LayerNorm's weight and bias. */
export interface NormLayer {
  readonly weight: Float32Array;
  readonly bias: Float32Array;
}

/**
 * LayerNorm of `x` into `out`: `(x − mean) / √(var + ε) · weight + bias`, the biased variance,
 * ε = {@link LAYER_NORM_EPS}.
 */
export function layerNormInto(x: Float32Array, layer: NormLayer, out: Float32Array): void {
  const { weight, bias } = layer;
  const n = x.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i]!;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const centred = x[i]! - mean;
    squares += centred * centred;
  }
  const scale = 1 / Math.sqrt(squares / n + LAYER_NORM_EPS);
  for (let i = 0; i < n; i++) out[i] = (x[i]! - mean) * scale * weight[i]! + bias[i]!;
}

/** GELU, tanh approximation, in place: `½x(1 + tanh(√(2/π)(x + 0.044715x³)))`. */
export function geluTanhInPlace(x: Float32Array): void {
  for (let i = 0; i < x.length; i++) {
    const v = x[i]!;
    x[i] = 0.5 * v * (1 + Math.tanh(GELU_SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v)));
  }
}
