import { submitUploadedPass } from '../kernels/one-pass';
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
  submitUploadedPass(
    device,
    'scatter rows',
    scatterRowsSource(),
    [
      {
        data: Uint32Array.of(count, hd4, valueShift, 0),
        label: 'row move parameters',
        uniform: true,
      },
      { data: moves, label: 'row moves' },
    ],
    [rows, pool.keys, pool.values],
    Math.ceil((count * hd4) / 64),
  );
}
