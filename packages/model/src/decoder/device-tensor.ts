import { tf } from '@lethe/tensor';

/** `GPUBufferUsage` bits a buffer needs to become a tensor: storage, copy source and destination. */
export const TENSOR_USAGE = 0x0080 | 0x0004 | 0x0008;

/**
 * A tensor copied from a GPU buffer of tfjs's WebGPU device (`tf.tensor({ buffer })`). tfjs copies
 * it into a buffer of the *same usage*, so a source without copy-destination usage makes the copy
 * invalid — and with it the whole submission of tfjs's pending work, silently. Refused here.
 *
 * @throws Error (a programming error, not bad input) for a buffer without that usage.
 */
export function tensorOfBuffer(buffer: GPUBuffer, shape: number[], dtype: 'float32' | 'int32') {
  if ((buffer.usage & TENSOR_USAGE) !== TENSOR_USAGE) {
    throw new Error(
      `a GPU buffer becomes a tensor only with storage, copy-source and copy-destination usage (got ${buffer.usage})`,
    );
  }
  return tf.tensor({ buffer }, shape, dtype);
}
