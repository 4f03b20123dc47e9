// Node-only (node:fs, node:zlib): exported by `@lethe/eval/node`.

import { readFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { LetheError, unreadableFile } from '@lethe/core';

/**
 * Whether `path` names a gzip-compressed file: it ends in `.gz`, as a whole leaderboard's
 * results file does (hundreds of cells × hundreds of per-example outcomes, megabytes of text that
 * compress about tenfold).
 */
function isGzipPath(path: string): boolean {
  return path.endsWith('.gz');
}

/**
 * The bytes to write for `text` at `path`: gzip-compressed when {@link isGzipPath} (no file
 * name or time in the header, so the same text gives the same bytes), else the text as is.
 */
export function encodeForPath(path: string, text: string): string | Uint8Array {
  return isGzipPath(path) ? gzipSync(text, { level: 9 }) : text;
}

/**
 * Reads the text file at `path`, decompressing it when {@link isGzipPath}.
 *
 * @throws the read error as is (its `code`, e.g. `ENOENT`, tells a missing file); LetheError
 *   `E_FORMAT` naming `path` when a `.gz` file is not gzip data.
 */
async function readPathText(path: string): Promise<string> {
  const bytes = await readFile(path);
  if (!isGzipPath(path)) return bytes.toString('utf8');
  try {
    return gunzipSync(bytes).toString('utf8');
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not gzip data: ${(error as Error).message}`, path);
  }
}

/**
 * Reads and parses the JSON file at `path` (gzip-compressed when it ends in `.gz`).
 *
 * @throws LetheError naming `path`: `E_ARG` when it cannot be read (and why), `E_FORMAT` when
 *   it is not gzip data (a `.gz` path) or not JSON.
 */
export async function readJsonPath(path: string): Promise<unknown> {
  return parseJson(path, (await readOrThrow(path, false)) as string);
}

/**
 * {@link readJsonPath}, or `undefined` when there is no file at `path` (a run's first start).
 *
 * @throws as {@link readJsonPath} for any other failure.
 */
export async function readJsonPathIfPresent(path: string): Promise<unknown> {
  const text = await readOrThrow(path, true);
  return text === undefined ? undefined : parseJson(path, text);
}

async function readOrThrow(path: string, missingIsUndefined: boolean): Promise<string | undefined> {
  try {
    return await readPathText(path);
  } catch (error) {
    if (missingIsUndefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadableFile(path, error, 'E_ARG');
  }
}

function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
}
