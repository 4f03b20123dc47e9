import { LetheError } from '../errors';
import { DTYPE_ARRAY_CONSTRUCTORS, dtypeRank, isSafetensorsDtype } from './dtype';
import { elementCount } from './element-count';
import { METADATA_KEY } from './header';
import { encodeLittleEndian, HOST_IS_LITTLE_ENDIAN } from './little-endian';
import type { SafetensorsMetadata, SafetensorsTensor } from './types';

/**
 * Serialises tensors into safetensors bytes, laid out as the reference implementation does:
 * tensors ordered by dtype alignment (largest element size first) then by name (code-point
 * order), `__metadata__` first in the header with its keys sorted, compact JSON padded with
 * spaces to a multiple of 8 bytes. Every tensor therefore starts at an offset aligned to its
 * element size, and the same input always gives the same bytes.
 *
 * @param tensors Tensors by name; each `data` must be the typed array of its dtype
 *   ({@link SafetensorsArrays}) with exactly shape-product elements.
 * @param metadata Optional `__metadata__` (string values only).
 * @throws LetheError `E_DTYPE` (unknown dtype or wrong array type), `E_SHAPE` (bad shape or
 *   element count), `E_ARG` (reserved name, BOOL value other than 0/1, non-string metadata);
 *   each names the tensor.
 */
export function serializeSafetensors(
  tensors: Record<string, SafetensorsTensor>,
  metadata?: SafetensorsMetadata,
): Uint8Array {
  if (typeof tensors !== 'object' || tensors === null) {
    throw new LetheError('E_ARG', 'must be an object of tensors', 'tensors');
  }
  const ordered = Object.entries(tensors)
    .map(([name, tensor]) => checkTensor(name, tensor))
    .sort(
      ([nameA, a], [nameB, b]) =>
        dtypeRank(b.dtype) - dtypeRank(a.dtype) || compareCodePoints(nameA, nameB),
    );
  const parts: string[] = [];
  if (metadata !== undefined) parts.push(`"${METADATA_KEY}":${metadataJson(metadata)}`);
  let offset = 0;
  for (const [name, tensor] of ordered) {
    const end = offset + tensor.data.byteLength;
    const info = JSON.stringify({
      dtype: tensor.dtype,
      shape: tensor.shape,
      data_offsets: [offset, end],
    });
    parts.push(`${JSON.stringify(name)}:${info}`);
    offset = end;
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const headerLength = Math.ceil(json.byteLength / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.byteLength, 8 + headerLength);
  let position = 8 + headerLength;
  for (const [, tensor] of ordered) {
    const { buffer, byteOffset, byteLength } = tensor.data;
    if (HOST_IS_LITTLE_ENDIAN) out.set(new Uint8Array(buffer, byteOffset, byteLength), position);
    else encodeLittleEndian(tensor, out.subarray(position, position + byteLength));
    position += byteLength;
  }
  return out;
}

function checkTensor(name: string, tensor: SafetensorsTensor): [string, SafetensorsTensor] {
  if (name === METADATA_KEY) {
    throw new LetheError('E_ARG', `"${METADATA_KEY}" is reserved for metadata`, name);
  }
  if (typeof tensor !== 'object' || tensor === null) {
    throw new LetheError('E_ARG', 'must be an object {dtype, shape, data}', name);
  }
  const { dtype, shape, data } = tensor;
  if (!isSafetensorsDtype(dtype)) {
    throw new LetheError('E_DTYPE', `unsupported dtype ${JSON.stringify(dtype)}`, name);
  }
  const expectedArray = DTYPE_ARRAY_CONSTRUCTORS[dtype];
  if (!(data instanceof expectedArray)) {
    throw new LetheError('E_DTYPE', `${dtype} data must be a ${expectedArray.name}`, name);
  }
  const count = Array.isArray(shape) ? elementCount(shape) : undefined;
  if (count === undefined) {
    throw new LetheError('E_SHAPE', 'shape must be an array of non-negative integers', name);
  }
  if (data.length !== count) {
    throw new LetheError(
      'E_SHAPE',
      `shape ${JSON.stringify(shape)} needs ${count} elements, data has ${data.length}`,
      name,
    );
  }
  if (dtype === 'BOOL') {
    const bad = (data as Uint8Array).findIndex((value) => value > 1);
    if (bad >= 0) throw new LetheError('E_ARG', `BOOL element ${bad} must be 0 or 1`, name);
  }
  return [name, { dtype, shape: [...shape], data } as SafetensorsTensor];
}

function metadataJson(metadata: SafetensorsMetadata): string {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new LetheError('E_ARG', 'must be an object of strings', 'metadata');
  }
  const entries = Object.entries(metadata).sort(([a], [b]) => compareCodePoints(a, b));
  for (const [key, value] of entries) {
    if (typeof value !== 'string') {
      throw new LetheError('E_ARG', `value of "${key}" must be a string`, 'metadata');
    }
  }
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`;
}

/** Orders strings by Unicode code point (= UTF-8 byte order, as Rust's `str` ordering). */
function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a, (c) => c.codePointAt(0)!);
  const right = Array.from(b, (c) => c.codePointAt(0)!);
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i++) {
    if (left[i] !== right[i]) return left[i]! - right[i]!;
  }
  return left.length - right.length;
}
