const f32 = Math.fround;

/**
 * The rotary `cos` and `sin` of each token's angles, `[2, B, half]` (cos, then sin): the float32
 * angle `position · inverseFrequency`, its `cos` and `sin` taken in float64 and rounded (tfjs's own
 * may differ from them in the last bit). {@link ropeRowsInPlace} rotates with it on the host, the
 * RoPE-rows pass of `@lethe/kernels-webgpu` on the device.
 *
 * @param positions `[B]`, the position of each token.
 * @param inverseFrequencies `[headDim / 2]` (`ropeInverseFrequencies`).
 */
export function ropeRotation(
  positions: Int32Array,
  inverseFrequencies: Float32Array,
): Float32Array {
  const half = inverseFrequencies.length;
  const count = positions.length;
  const rotation = new Float32Array(2 * count * half);
  positions.forEach((position, b) => {
    for (let i = 0; i < half; i++) {
      const angle = f32(position * inverseFrequencies[i]!);
      rotation[b * half + i] = Math.cos(angle);
      rotation[(count + b) * half + i] = Math.sin(angle);
    }
  });
  return rotation;
}

/**
 * RoPE on the host, in place, for rows of one token each: the rotation `applyRope` applies
 * (`x·cos + rotate(x)·sin`, `rotate(x) = [−x₂, x₁]` over the two halves of each head), in float32
 * arithmetic, with the angles of {@link ropeRotation}.
 *
 * @param rows `[B, heads, headDim]`, row `b` the heads of one token.
 * @param rotation `[2, B, headDim / 2]` ({@link ropeRotation} of the rows' positions).
 * @param headDim the width of one head.
 */
export function ropeRowsInPlace(rows: Float32Array, rotation: Float32Array, headDim: number): void {
  const half = headDim / 2;
  const count = rotation.length / headDim;
  if (count === 0) return;
  const rowSize = rows.length / count;
  for (let b = 0; b < count; b++) {
    const cos = rotation.subarray(b * half, (b + 1) * half);
    const sin = rotation.subarray((count + b) * half, (count + b + 1) * half);
    for (let at = b * rowSize; at < (b + 1) * rowSize; at += headDim) {
      for (let i = 0; i < half; i++) {
        const first = rows[at + i]!;
        const second = rows[at + half + i]!;
        rows[at + i] = f32(f32(first * cos[i]!) + f32(-second * sin[i]!));
        rows[at + half + i] = f32(f32(second * cos[i]!) + f32(first * sin[i]!));
      }
    }
  }
}
