import {
  DTYPE_ARRAY_CONSTRUCTORS,
  dtypeSize,
  type SafetensorsArrays,
  type SafetensorsDtype,
} from './dtype';
import type { SafetensorsTensor } from './types';

/** True on little-endian hosts, where typed arrays can view safetensors data directly. */
export const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Decodes `bytes` (little-endian elements of `dtype`, any alignment) into a new typed array
 * through a `DataView`. Elements move as unsigned integers of their width, so the bits are
 * kept exactly (NaN payloads included) on hosts of either endianness.
 */
export function decodeLittleEndian<D extends SafetensorsDtype>(
  dtype: D,
  bytes: Uint8Array,
): SafetensorsArrays[D] {
  const size = dtypeSize(dtype);
  const count = bytes.byteLength / size;
  const buffer = new ArrayBuffer(bytes.byteLength);
  const source = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (size === 1) {
    new Uint8Array(buffer).set(bytes);
  } else if (size === 2) {
    const out = new Uint16Array(buffer);
    for (let i = 0; i < count; i++) out[i] = source.getUint16(2 * i, true);
  } else if (size === 4) {
    const out = new Uint32Array(buffer);
    for (let i = 0; i < count; i++) out[i] = source.getUint32(4 * i, true);
  } else {
    const out = new BigUint64Array(buffer);
    for (let i = 0; i < count; i++) out[i] = source.getBigUint64(8 * i, true);
  }
  return new DTYPE_ARRAY_CONSTRUCTORS[dtype](buffer) as SafetensorsArrays[D];
}

/**
 * Writes the elements of `tensor` into `out` as little-endian bytes through a `DataView`,
 * bit-exactly (see {@link decodeLittleEndian}). `out.byteLength` must equal the tensor's
 * byte length.
 */
export function encodeLittleEndian(tensor: SafetensorsTensor, out: Uint8Array): void {
  const { buffer, byteOffset, length } = tensor.data;
  const target = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const size = dtypeSize(tensor.dtype);
  if (size === 1) {
    out.set(new Uint8Array(buffer, byteOffset, length));
  } else if (size === 2) {
    const bits = new Uint16Array(buffer, byteOffset, length);
    for (let i = 0; i < length; i++) target.setUint16(2 * i, bits[i]!, true);
  } else if (size === 4) {
    const bits = new Uint32Array(buffer, byteOffset, length);
    for (let i = 0; i < length; i++) target.setUint32(4 * i, bits[i]!, true);
  } else {
    const bits = new BigUint64Array(buffer, byteOffset, length);
    for (let i = 0; i < length; i++) target.setBigUint64(8 * i, bits[i]!, true);
  }
}
