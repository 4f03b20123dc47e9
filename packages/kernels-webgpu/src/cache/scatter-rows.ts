import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import { submitOnePass } from '../kernels/one-pass';
import { scatterRowsSource } from '../kernels/scatter-rows-wgsl';
import type { PoolBuffers } from './page-pool';

/**
 * Copies key and value rows of `rows` into pool slots in one pass (see `scatterRowsSource`):
 * `moves` holds `[source vec4 offset of the key row, pool slot]` pairs, a value row sits
 * `valueShift` vec4s after its key row. Submitted now.
 */
export function scatterRows(
  device: GPUDevice,
  pool: PoolBuffers,
  rows: GPUBuffer,
  moves: Uint32Array,
  hd4: number,
  valueShift: number,
): void {
  const count = moves.length / 2;
  if (count === 0) return;
  const made: GPUBuffer[] = [];
  try {
    const list = createGpuBuffer(
      device,
      moves.byteLength,
      Usage.STORAGE | Usage.COPY_DST,
      'row moves',
    );
    made.push(list);
    const params = createGpuBuffer(
      device,
      16,
      Usage.UNIFORM | Usage.COPY_DST,
      'row move parameters',
    );
    made.push(params);
    writeArray(device, list, 0, moves);
    writeArray(device, params, 0, Uint32Array.of(count, hd4, valueShift, 0));
    submitOnePass(
      device,
      'scatter rows',
      scatterRowsSource(),
      [params, list, rows, pool.keys, pool.values],
      Math.ceil((count * hd4) / 64),
    );
  } finally {
    for (const buffer of made) destroyGpuBuffer(buffer);
  }
}
