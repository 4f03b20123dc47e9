import type { SafetensorsArrays, SafetensorsDtype } from './dtype';

/**
 * One tensor of a safetensors file: its dtype, its row-major shape, and its elements in a
 * typed array matching the dtype (`F32` → `Float32Array`, `F16`/`BF16` → `Uint16Array` bits,
 * `I64` → `BigInt64Array`, …; see {@link SafetensorsArrays}). Narrow on `dtype` to get the
 * array type.
 */
export type SafetensorsTensor = {
  [D in SafetensorsDtype]: {
    dtype: D;
    shape: readonly number[];
    data: SafetensorsArrays[D];
  };
}[SafetensorsDtype];

/** The free-form `__metadata__` of a safetensors header: string keys to string values. */
export type SafetensorsMetadata = Record<string, string>;

/** A parsed safetensors file. */
export interface SafetensorsFile {
  /** Tensors by name (own properties only; a name may be any string). */
  tensors: Record<string, SafetensorsTensor>;
  /** The header's `__metadata__`, or `undefined` when the header has none. */
  metadata: SafetensorsMetadata | undefined;
}
