import { LetheError } from '../errors';
import { dtypeSize, isSafetensorsDtype, type SafetensorsDtype } from './dtype';
import { elementCount } from './element-count';
import type { SafetensorsMetadata } from './types';

/** Largest header the reader accepts, as in the reference implementation (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** Key of the free-form metadata entry in a safetensors header. */
export const METADATA_KEY = '__metadata__';

/** One tensor entry of a header, validated on its own (offsets relative to the data section). */
export interface HeaderEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

/** A decoded and validated header. */
export interface SafetensorsHeader {
  entries: HeaderEntry[];
  metadata: SafetensorsMetadata | undefined;
  /** Byte offset of the data section in the file (8 + header length). */
  dataStart: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the 8-byte length prefix and the JSON header of a safetensors file and validates
 * every entry on its own (dtype, shape, offsets consistent with shape × dtype size). How the
 * entries tile the data section is checked by the caller.
 *
 * @throws LetheError `E_FORMAT` for a truncated or malformed header, `E_DTYPE` for an
 *   unsupported dtype (naming the tensor).
 */
export function readSafetensorsHeader(bytes: Uint8Array): SafetensorsHeader {
  if (bytes.byteLength < 8) {
    throw new LetheError(
      'E_FORMAT',
      `file has ${bytes.byteLength} bytes, fewer than the 8-byte header length (truncated?)`,
      'header',
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const declared = view.getBigUint64(0, true);
  if (declared > BigInt(MAX_HEADER_BYTES)) {
    throw new LetheError(
      'E_FORMAT',
      `declared header length ${declared} exceeds the ${MAX_HEADER_BYTES}-byte limit`,
      'header',
    );
  }
  const headerLength = Number(declared);
  const dataStart = 8 + headerLength;
  if (dataStart > bytes.byteLength) {
    throw new LetheError(
      'E_FORMAT',
      `declared header length ${headerLength} runs past the end of the ${bytes.byteLength}-byte file (truncated?)`,
      'header',
    );
  }
  const json = decodeJson(bytes.subarray(8, dataStart));
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new LetheError('E_FORMAT', 'header JSON must be an object', 'header');
  }
  let metadata: SafetensorsMetadata | undefined;
  const entries: HeaderEntry[] = [];
  for (const [name, value] of Object.entries(json)) {
    if (name === METADATA_KEY) metadata = readMetadata(value);
    else entries.push(readEntry(name, value));
  }
  return { entries, metadata, dataStart };
}

function decodeJson(headerBytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(headerBytes);
  } catch {
    throw new LetheError('E_FORMAT', 'header is not valid UTF-8', 'header');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError(
      'E_FORMAT',
      `header is not valid JSON (${(error as Error).message})`,
      'header',
    );
  }
}

function readMetadata(value: unknown): SafetensorsMetadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LetheError('E_FORMAT', 'must be an object of strings', METADATA_KEY);
  }
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') {
      throw new LetheError('E_FORMAT', `value of "${key}" must be a string`, METADATA_KEY);
    }
  }
  return Object.fromEntries(Object.entries(value as Record<string, string>));
}

function readEntry(name: string, value: unknown): HeaderEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LetheError('E_FORMAT', 'header entry must be an object', name);
  }
  const { dtype, shape, data_offsets: offsets } = value as Record<string, unknown>;
  if (typeof dtype !== 'string') throw new LetheError('E_FORMAT', 'dtype must be a string', name);
  if (!isSafetensorsDtype(dtype)) {
    throw new LetheError('E_DTYPE', `unsupported dtype ${JSON.stringify(dtype)}`, name);
  }
  if (!Array.isArray(shape)) throw new LetheError('E_FORMAT', 'shape must be an array', name);
  const count = elementCount(shape);
  if (count === undefined) {
    throw new LetheError(
      'E_FORMAT',
      `shape ${JSON.stringify(shape)} must hold non-negative integers with a safe product`,
      name,
    );
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || elementCount(offsets) === undefined) {
    throw new LetheError('E_FORMAT', 'data_offsets must be two non-negative integers', name);
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) {
    throw new LetheError('E_FORMAT', `data_offsets [${begin}, ${end}] end before they begin`, name);
  }
  const byteLength = count * dtypeSize(dtype);
  if (!Number.isSafeInteger(byteLength) || end - begin !== byteLength) {
    throw new LetheError(
      'E_FORMAT',
      `data_offsets [${begin}, ${end}] span ${end - begin} bytes but ${dtype} ${JSON.stringify(shape)} needs ${byteLength}`,
      name,
    );
  }
  return { name, dtype, shape: [...(shape as number[])], begin, end };
}
