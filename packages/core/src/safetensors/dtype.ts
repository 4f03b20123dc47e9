/**
 * The safetensors dtypes Lethe reads and writes, in the order of the reference
 * implementation's `Dtype` enum (increasing alignment). The writer sorts tensors by this
 * order, descending, so every tensor's data starts at a multiple of its element size.
 */
export const SAFETENSORS_DTYPES = [
  'BOOL',
  'U8',
  'F16',
  'BF16',
  'I32',
  'F32',
  'F64',
  'I64',
] as const;

/** A safetensors dtype name as it appears in the file header. */
export type SafetensorsDtype = (typeof SAFETENSORS_DTYPES)[number];

/**
 * The typed array that holds a tensor's elements, per dtype. F16 and BF16 hold raw 16-bit
 * patterns (convert with {@link toFloat32}); I64 holds `bigint`s so no value is rounded;
 * BOOL holds bytes that are 0 or 1.
 */
export interface SafetensorsArrays {
  BOOL: Uint8Array;
  U8: Uint8Array;
  F16: Uint16Array;
  BF16: Uint16Array;
  I32: Int32Array;
  F32: Float32Array;
  F64: Float64Array;
  I64: BigInt64Array;
}

/** Typed array constructor of each dtype (all share the same `(buffer, byteOffset, length)` form). */
export const DTYPE_ARRAY_CONSTRUCTORS = {
  BOOL: Uint8Array,
  U8: Uint8Array,
  F16: Uint16Array,
  BF16: Uint16Array,
  I32: Int32Array,
  F32: Float32Array,
  F64: Float64Array,
  I64: BigInt64Array,
} as const;

/** True when `value` names a dtype of {@link SAFETENSORS_DTYPES}. */
export function isSafetensorsDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && (SAFETENSORS_DTYPES as readonly string[]).includes(value);
}

/** Bytes per element of each dtype of {@link SAFETENSORS_DTYPES}. */
export const BYTES_PER_ELEMENT = Object.freeze({
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  U8: 1,
  BOOL: 1,
} as const);

/** Bytes per element of `dtype`. */
export function dtypeSize(dtype: SafetensorsDtype): number {
  return BYTES_PER_ELEMENT[dtype];
}

/** Position of `dtype` in the reference enum order (used to sort tensors for writing). */
export function dtypeRank(dtype: SafetensorsDtype): number {
  return SAFETENSORS_DTYPES.indexOf(dtype);
}
