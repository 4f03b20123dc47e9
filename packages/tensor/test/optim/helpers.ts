import type { tf } from '../../src/tf';

/** Host copy of a tensor's values as a plain number array. */
export function values(t: tf.Tensor): number[] {
  return Array.from(t.dataSync());
}
