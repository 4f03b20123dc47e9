import { countUpload } from './counters';

/** 32-bit arrays the kernels read. */
export type WordArray = Float32Array | Int32Array | Uint32Array;

/**
 * Queues a write of `data` into `buffer` at `byteOffset` (ordered before the next submit). The
 * array may be a view into a larger buffer, shared or not: only its own bytes are written.
 */
export function writeArray(
  device: GPUDevice,
  buffer: GPUBuffer,
  byteOffset: number,
  data: WordArray,
): void {
  countUpload(data.byteLength);
  device.queue.writeBuffer(
    buffer,
    byteOffset,
    data.buffer as ArrayBuffer,
    data.byteOffset,
    data.byteLength,
  );
}
