/**
 * `log σ(x) = −log(1 + e^(−x))`, computed without overflow or cancellation for any finite `x`:
 * `−log1p(e^(−x))` for `x ≥ 0`, `x − log1p(e^x)` below. Always ≤ 0; −∞ only for `x = −∞`, and
 * NaN for NaN.
 */
export function logSigmoid(x: number): number {
  return x >= 0 ? -Math.log1p(Math.exp(-x)) : x - Math.log1p(Math.exp(x));
}
