import { tf } from '@lethe/tensor';

/**
 * Rotary-embedding inverse frequencies `1 / θ^(2i/d)` for `i = 0 … d/2 − 1` (HF Llama
 * `inv_freq`, no rope scaling).
 *
 * @param headDim the (even) width `d` of one head.
 * @param theta the base `θ` (`rope_theta`).
 */
export function ropeInverseFrequencies(headDim: number, theta: number): Float32Array {
  const half = headDim / 2;
  const out = new Float32Array(half);
  for (let i = 0; i < half; i++) out[i] = 1 / theta ** ((2 * i) / headDim);
  return out;
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
