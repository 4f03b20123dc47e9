import { LetheError } from '@lethe/core';
import { fromBase64, toBase64 } from './base64';

/**
 * A JSON array of float64 values packed as the base64 of their little-endian bytes: a CMA-ES
 * state over the default BAM's 4,172 parameters holds two 4,172² matrices, whose decimal JSON
 * would pass the longest string a JavaScript engine makes, while base64 takes 10⅔ characters a
 * value and keeps every bit.
 */
export interface PackedFloats {
  readonly float64: string;
}

/** How `CMAESState` writes numbers JSON cannot hold (es-cmaes' `JsonNumber`). */
const SPECIAL: ReadonlyMap<string, number> = new Map([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['-0', -0],
]);

function isFloatArray(value: unknown): value is (number | string)[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => typeof v === 'number' || (typeof v === 'string' && SPECIAL.has(v)))
  );
}

/**
 * A copy of the JSON value `value` in which every non-empty array of numbers (plain numbers or
 * es-cmaes' `'NaN'`, `'Infinity'`, `'-Infinity'`, `'-0'`) is a {@link PackedFloats}.
 */
export function packFloatArrays(value: unknown): unknown {
  if (isFloatArray(value)) {
    const view = new DataView(new ArrayBuffer(value.length * 8));
    value.forEach((v, i) =>
      view.setFloat64(i * 8, typeof v === 'number' ? v : SPECIAL.get(v)!, true),
    );
    return { float64: toBase64(new Uint8Array(view.buffer)) } satisfies PackedFloats;
  }
  if (Array.isArray(value)) return value.map(packFloatArrays);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, packFloatArrays(v)]));
  }
  return value;
}

/**
 * Undoes {@link packFloatArrays}: every {@link PackedFloats} becomes the array of numbers it
 * packs, non-finite values and −0 written as es-cmaes writes them.
 *
 * @throws LetheError `E_FORMAT` naming the field (`field.a.b[3]`) of a packed array that is not
 *   base64 of whole float64 values.
 */
export function unpackFloatArrays(value: unknown, field: string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => unpackFloatArrays(v, `${field}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === 'float64') {
    return unpackFloats(entries[0]![1], field);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, unpackFloatArrays(v, `${field}.${k}`)]));
}

function unpackFloats(text: unknown, field: string): (number | string)[] {
  let bytes: Uint8Array;
  try {
    if (typeof text !== 'string') throw new Error('not a string');
    bytes = fromBase64(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not base64: ${(error as Error).message}`, field);
  }
  if (bytes.length % 8 !== 0) {
    throw new LetheError('E_FORMAT', `holds ${bytes.length} bytes, not whole float64s`, field);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length / 8 }, (_, i) => {
    const x = view.getFloat64(i * 8, true);
    if (Number.isNaN(x)) return 'NaN';
    if (Object.is(x, -0)) return '-0';
    if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
    return x;
  });
}
