// Node-only (node:fs and the Node entry of @lethe/model): exported by `@lethe/eval/node`.

import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LetheError } from '@lethe/core';
import { writeFileAtomic } from '@lethe/model/node';
import { encodeForPath, readJsonPathIfPresent } from './gzip-json-path';
import type { SweepResults } from './results';
import { checkResults, serializeResults } from './results-file';
import type { SweepConfig } from './sweep-config';

/**
 * Writes `results` to `path` atomically (temporary file, fsync, rename), so an interrupted
 * sweep leaves either the previous or the new file, never a torn one. Missing parent
 * directories are created. A path ending in `.gz` is written gzip-compressed.
 *
 * @throws LetheError `E_ARG` naming `path` when it is not a non-empty string or cannot be
 *   written (a directory, a parent that is a file, no permission), with the system's reason;
 *   `E_ARG` naming `results` when it is not a results document.
 */
export async function writeResultsFile(path: string, results: SweepResults): Promise<void> {
  requirePath(path);
  const text = serializeResults(results);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, encodeForPath(path, text));
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `cannot be written: ${error instanceof Error ? error.message : String(error)}`,
      path,
    );
  }
}

/**
 * Reads the results file at `path` for a sweep with `config`, or returns `undefined` when there
 * is none; a path ending in `.gz` is read as gzip-compressed. Never mixes sweeps: the file must be of this format and version and embed a config
 * equal to `config` (after normalisation), and its cells must be well-formed cells of that sweep
 * (see `checkResults`).
 *
 * @throws LetheError `E_ARG` naming `path` when it is not a non-empty string; `E_ARG` naming
 *   the file when it cannot be read (a directory, no permission; the reason is given) or its config differs from `config` (the message names
 *   the first differing field); `E_FORMAT` naming the file when it is not JSON (or, ending in `.gz`, not gzip data), of another
 *   format or version, or holds a malformed config or cell.
 */
export async function readResultsFile(
  path: string,
  config: SweepConfig,
): Promise<SweepResults | undefined> {
  requirePath(path);
  const json = await readJsonPathIfPresent(path);
  if (json === undefined) return undefined;
  return checkResults(json, config, path);
}

/** Checks a results path argument: a non-empty string, else `E_ARG` naming `path`. */
function requirePath(path: string): void {
  if (typeof path !== 'string' || path.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty file path', 'path');
  }
}
