import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  LetheError,
  type ParseSafetensorsOptions,
  parseSafetensors,
  type SafetensorsFile,
  type SafetensorsMetadata,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import { checkObject, kindOf } from '../option-checks';

/**
 * Writes `contents` to `path` atomically: the bytes go to a temporary file in the same
 * directory, which is flushed to disk (`fsync`) and then renamed over `path`. Readers see
 * either the old file or the complete new one; on failure the temporary file is removed.
 * The directory itself is then synced where the platform allows it (not on Windows).
 */
export async function writeFileAtomic(path: string, contents: Uint8Array | string): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx');
    try {
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}

/** Makes a rename durable by syncing its directory; a no-op where directories cannot be opened. */
async function syncDirectory(directory: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch {
    // Windows cannot open or fsync a directory; the rename itself is still atomic there.
  } finally {
    await handle?.close();
  }
}

/** Largest single read (Node rejects reads of 2 GiB or more). */
const MAX_READ_CHUNK = 1 << 30;

/**
 * Reads a whole file into one `Uint8Array` (also past the 2 GiB limit of `fs.readFile`).
 */
export async function readFileBytes(path: string): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const bytes = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const chunk = Math.min(size - filled, MAX_READ_CHUNK);
      const { bytesRead } = await handle.read(bytes, filled, chunk, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === size ? bytes : bytes.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * Reads and parses a safetensors file (see {@link parseSafetensors} for validation and the
 * `copy` option). File-system errors (e.g. `ENOENT`) propagate unchanged.
 *
 * @throws LetheError `E_ARG` naming `path` when it is not a string, `options` when it is not
 *   an object; {@link parseSafetensors}'s errors.
 */
export async function readSafetensorsFile(
  path: string,
  options: ParseSafetensorsOptions = {},
): Promise<SafetensorsFile> {
  if (typeof path !== 'string') {
    throw new LetheError('E_ARG', `must be a file path, got ${kindOf(path)}`, 'path');
  }
  checkObject(options, 'options');
  return parseSafetensors(await readFileBytes(path), options);
}

/**
 * Serialises tensors (see {@link serializeSafetensors}) and writes them to `path`
 * atomically (see {@link writeFileAtomic}). Validation happens before anything is written.
 */
export async function writeSafetensorsFile(
  path: string,
  tensors: Record<string, SafetensorsTensor>,
  metadata?: SafetensorsMetadata,
): Promise<void> {
  await writeFileAtomic(path, serializeSafetensors(tensors, metadata));
}

/**
 * Refuses a directory argument that is not a string.
 *
 * @throws LetheError `E_ARG` naming `dir`.
 */
export function checkDirectory(dir: unknown): asserts dir is string {
  if (typeof dir !== 'string') {
    throw new LetheError('E_ARG', `must be a directory path, got ${kindOf(dir)}`, 'dir');
  }
}
