import type { tf } from '@lethe/tensor';

/** Host copy of a tensor's values as a plain number array. */
export function values(t: tf.Tensor): number[] {
  return Array.from(t.dataSync());
}

/** Bit patterns of float32 values, for bit-identity checks (distinguishes −0 and NaNs). */
export function bits(data: Float32Array): Uint32Array {
  return new Uint32Array(Float32Array.from(data).buffer);
}
