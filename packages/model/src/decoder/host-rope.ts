const f32 = Math.fround;

/**
 * RoPE on the host, in place, for rows of one token each: the rotation `applyRope` applies
 * (`x·cos + rotate(x)·sin`, `rotate(x) = [−x₂, x₁]` over the two halves of each head), in float32
 * arithmetic, with `cos` and `sin` of the float32 angle `position · inverseFrequency` taken in
 * float64 and rounded (tfjs's own may differ from them in the last bit).
 *
 * @param rows `[B, heads, headDim]`, row `b` the heads of one token.
 * @param positions `[B]`, the position of each row's token.
 * @param inverseFrequencies `[headDim / 2]` (`ropeInverseFrequencies`).
 */
export function ropeRowsInPlace(
  rows: Float32Array,
  positions: Int32Array,
  inverseFrequencies: Float32Array,
): void {
  const half = inverseFrequencies.length;
  const headDim = 2 * half;
  const rowSize = rows.length / positions.length;
  const cos = new Float32Array(half);
  const sin = new Float32Array(half);
  positions.forEach((position, b) => {
    for (let i = 0; i < half; i++) {
      const angle = f32(position * inverseFrequencies[i]!);
      cos[i] = Math.cos(angle);
      sin[i] = Math.sin(angle);
    }
    for (let at = b * rowSize; at < (b + 1) * rowSize; at += headDim) {
      for (let i = 0; i < half; i++) {
        const first = rows[at + i]!;
        const second = rows[at + half + i]!;
        rows[at + i] = f32(f32(first * cos[i]!) + f32(-second * sin[i]!));
        rows[at + half + i] = f32(f32(second * cos[i]!) + f32(first * sin[i]!));
      }
    }
  });
}
