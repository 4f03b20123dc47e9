import { Usage } from '../src/device/usage';
import { writeArray } from '../src/device/write-array';
import { createGpuBuffer, DeviceRows, destroyGpuBuffer } from '../src/index';

/** One sequence's tokens as a step's rows hold them: queries, and its chunk's keys and values. */
export interface RowsSource {
  readonly queries: Float32Array;
  readonly chunk?: { readonly keys: Float32Array; readonly values: Float32Array };
}

/** A storage buffer holding `data` (a projection as tfjs would hold it). */
export function deviceArray(device: GPUDevice, data: Float32Array): GPUBuffer {
  const buffer = createGpuBuffer(device, data.byteLength, Usage.STORAGE | Usage.COPY_DST, 'test');
  writeArray(device, buffer, 0, data);
  return buffer;
}

/**
 * A one-layer step's {@link DeviceRows} holding `sources` from the rows `firstRows` name (other
 * rows NaN), rotated with `cos 1, sin 0` so that the rows are the sources' own numbers.
 */
export function stepRows(
  device: GPUDevice,
  shape: {
    readonly queryHeads: number;
    readonly kvHeads: number;
    readonly headDim: number;
    readonly gated?: boolean;
  },
  sources: readonly RowsSource[],
  firstRows: readonly number[],
  tokens: number,
): DeviceRows {
  const { queryHeads, kvHeads, headDim } = shape;
  const heads = queryHeads + 2 * kvHeads;
  const columns = new Float32Array(heads * headDim * tokens).fill(Number.NaN);
  const put = (h: number, row: number, vector: Float32Array) => {
    vector.forEach((x, d) => {
      columns[(h * headDim + d) * tokens + row] = x;
    });
  };
  sources.forEach((source, p) => {
    const count = source.queries.length / (queryHeads * headDim);
    for (let t = 0; t < count; t++) {
      const row = firstRows[p]! + t;
      for (let h = 0; h < queryHeads; h++) {
        const at = (t * queryHeads + h) * headDim;
        put(h, row, source.queries.subarray(at, at + headDim));
      }
      for (let h = 0; h < kvHeads && source.chunk !== undefined; h++) {
        const at = (t * kvHeads + h) * headDim;
        put(queryHeads + h, row, source.chunk.keys.subarray(at, at + headDim));
        put(queryHeads + kvHeads + h, row, source.chunk.values.subarray(at, at + headDim));
      }
    }
  });
  const rotation = new Float32Array(tokens * headDim);
  rotation.fill(1, 0, (tokens * headDim) / 2);
  const rows = new DeviceRows(device, { layers: 1, ...shape }, rotation);
  const projection = deviceArray(device, columns);
  try {
    rows.rotate(0, projection);
  } finally {
    destroyGpuBuffer(projection);
  }
  return rows;
}
