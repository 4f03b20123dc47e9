import { LetheError } from '../errors';
import { DTYPE_ARRAY_CONSTRUCTORS, dtypeSize } from './dtype';
import { type HeaderEntry, readSafetensorsHeader } from './header';
import { decodeLittleEndian, HOST_IS_LITTLE_ENDIAN } from './little-endian';
import type { SafetensorsFile, SafetensorsTensor } from './types';

/** Options of {@link parseSafetensors}. */
export interface ParseSafetensorsOptions {
  /**
   * Copy every tensor's data into its own buffer. Default `false`: on little-endian hosts a
   * tensor whose data is aligned to its element size is a view into `bytes` (zero-copy,
   * shares memory with the input); the others are always copies.
   */
  copy?: boolean;
}

/**
 * Parses a complete safetensors file held in memory.
 *
 * Everything is validated before any tensor is returned: the header length and JSON, each
 * entry's dtype, shape and offsets (which must match shape × dtype size), and the tiling of
 * the data section (entries sorted by offset must start at 0, touch without gap or overlap,
 * and end exactly at the end of the file). BOOL data must hold only 0 and 1. A file that
 * fails any check throws; a partially parsed file is never returned.
 *
 * @param bytes The whole file (a Node `Buffer` works too).
 * @throws LetheError `E_FORMAT` (truncated or malformed file; names the tensor when one is
 *   at fault), `E_DTYPE` (a dtype outside {@link SAFETENSORS_DTYPES}), `E_ARG` (`bytes` not
 *   bytes, `options` not an object).
 *
 * @example
 * ```ts
 * const file = parseSafetensors(bytes);
 * const w = file.tensors['model.norm.weight'];
 * const values = toFloat32(w); // Float32Array whatever the stored float dtype
 * ```
 */
export function parseSafetensors(
  bytes: Uint8Array,
  options: ParseSafetensorsOptions = {},
): SafetensorsFile {
  if (!(bytes instanceof Uint8Array)) {
    throw new LetheError('E_ARG', 'must be a Uint8Array', 'bytes');
  }
  if (typeof options !== 'object' || options === null) {
    const kind = options === null ? 'null' : typeof options;
    throw new LetheError('E_ARG', `must be an object, got ${kind}`, 'options');
  }
  const { entries, metadata, dataStart } = readSafetensorsHeader(bytes);
  checkTiling(entries, bytes.byteLength - dataStart);
  const data = bytes.subarray(dataStart);
  const tensors = Object.fromEntries(
    entries.map((entry) => [entry.name, decodeTensor(entry, data, options.copy === true)]),
  );
  return { tensors, metadata };
}

/** Entries sorted by offsets must cover `[0, dataLength)` exactly, without gaps or overlaps. */
function checkTiling(entries: HeaderEntry[], dataLength: number): void {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous: string | undefined;
  for (const entry of sorted) {
    if (entry.end > dataLength) {
      throw new LetheError(
        'E_FORMAT',
        `data_offsets [${entry.begin}, ${entry.end}] run past the ${dataLength}-byte data section (truncated?)`,
        entry.name,
      );
    }
    if (entry.begin !== covered) {
      const where =
        entry.begin < covered
          ? `overlaps tensor "${previous}" (which ends at ${covered})`
          : `leaves a gap after byte ${covered}`;
      throw new LetheError(
        'E_FORMAT',
        `data_offsets [${entry.begin}, ${entry.end}] ${where}`,
        entry.name,
      );
    }
    covered = entry.end;
    previous = entry.name;
  }
  if (covered !== dataLength) {
    throw new LetheError(
      'E_FORMAT',
      `tensors cover ${covered} bytes of a ${dataLength}-byte data section (trailing bytes)`,
      'header',
    );
  }
}

function decodeTensor(entry: HeaderEntry, data: Uint8Array, copy: boolean): SafetensorsTensor {
  const { name, dtype, shape, begin, end } = entry;
  const raw = data.subarray(begin, end);
  if (dtype === 'BOOL') {
    const bad = raw.findIndex((byte) => byte > 1);
    if (bad >= 0) {
      throw new LetheError('E_FORMAT', `BOOL element ${bad} is ${raw[bad]}, not 0 or 1`, name);
    }
  }
  const size = dtypeSize(dtype);
  const absolute = raw.byteOffset;
  let array: SafetensorsTensor['data'];
  if (!HOST_IS_LITTLE_ENDIAN) {
    array = decodeLittleEndian(dtype, raw);
  } else if (!copy && absolute % size === 0) {
    const buffer = raw.buffer as ArrayBuffer; // a SharedArrayBuffer works the same here
    array = new DTYPE_ARRAY_CONSTRUCTORS[dtype](buffer, absolute, raw.byteLength / size);
  } else {
    const owned = new Uint8Array(raw); // copies; Buffer#slice would not
    array = new DTYPE_ARRAY_CONSTRUCTORS[dtype](owned.buffer, 0, raw.byteLength / size);
  }
  return { dtype, shape, data: array } as SafetensorsTensor;
}
