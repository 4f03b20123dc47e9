import { tf } from '@lethe/tensor';

const f32 = Math.fround;

/**
 * Rotary-embedding inverse frequencies `1 / θ^(2i/d)` for `i = 0 … d/2 − 1` (HF Llama `inv_freq`,
 * no rope scaling), rounded as HF's float32 recipe rounds them, step by step:
 * `1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))` — the exponent
 * `2i/d` rounded to float32, `θ` (as float32) raised to it in float32, the reciprocal in float32.
 * This differs from the correctly rounded `θ^(−2i/d)` by an ulp for some `i` (3 of 8 at
 * `d = 16`, `θ = 10⁴`), an error the angle `position · inv_freq` multiplies by the position:
 * matching HF's rounding is what keeps long-context logits close to a torch float32 run.
 *
 * Each step is a float64 operation rounded once to float32 (`Math.fround`). For the quotient and
 * the reciprocal of float32 operands this is the correctly rounded float32 result (float64 has
 * more than `2·24 + 2` bits, so rounding twice cannot differ from rounding once). For `powf` it
 * is the correctly rounded float32 power unless the exact power lies within `Math.pow`'s own
 * error (about a float64 ulp, 2⁻⁵² relative) of a point half-way between two float32 values,
 * where that error could round it the wrong way; a test checks that the configurations it
 * covers are nowhere near that (the closest is 2⁻³¹ relative away).
 *
 * @param headDim the (even) width `d` of one head.
 * @param theta the base `θ` (`rope_theta`).
 */
export function ropeInverseFrequencies(headDim: number, theta: number): Float32Array {
  const base = f32(theta);
  return Float32Array.from({ length: headDim / 2 }, (_, i) => {
    const exponent = f32((2 * i) / headDim);
    return f32(1 / f32(base ** exponent));
  });
}

/** Cosine and sine tables of the rotary embedding, each `[B, 1, T, headDim]`. */
export interface RopeTables {
  readonly cos: tf.Tensor;
  readonly sin: tf.Tensor;
}

/**
 * Rotary tables for explicit token positions: angle `pos · inv_freq`, duplicated over both
 * halves of the head (HF `emb = cat(freqs, freqs)`).
 *
 * @param positions int32 `[B, T]` token positions.
 * @param inverseFrequencies `[headDim / 2]` from {@link ropeInverseFrequencies}.
 */
export function ropeTables(positions: tf.Tensor, inverseFrequencies: tf.Tensor): RopeTables {
  return tf.tidy(() => {
    const angles = tf.mul(tf.expandDims(tf.cast(positions, 'float32'), -1), inverseFrequencies);
    const full = tf.expandDims(tf.concat([angles, angles], -1), 1);
    return { cos: tf.cos(full), sin: tf.sin(full) };
  });
}

/**
 * Applies the rotary embedding in the HF `rotate_half` convention:
 * `x · cos + rotate_half(x) · sin` with `rotate_half([x₁, x₂]) = [−x₂, x₁]` (halves of the head).
 *
 * @param x queries or keys `[B, H, T, headDim]`.
 * @param tables from {@link ropeTables} for the same `B` and `T`.
 */
export function applyRope(x: tf.Tensor, tables: RopeTables): tf.Tensor {
  return tf.tidy(() => {
    const [first, second] = tf.split(x, 2, -1) as [tf.Tensor, tf.Tensor];
    const rotated = tf.concat([tf.neg(second), first], -1);
    return tf.add(tf.mul(x, tables.cos), tf.mul(rotated, tables.sin));
  });
}
