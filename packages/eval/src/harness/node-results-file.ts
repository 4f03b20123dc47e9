// Node-only (node:fs and the Node entry of @lethe/model): exported by `@lethe/eval/node`.
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';
import type { SweepResults } from './results';
import { checkResults, serializeResults } from './results-file';
import type { SweepConfig } from './sweep-config';

/**
 * Writes `results` to `path` atomically (temporary file, fsync, rename), so an interrupted
 * sweep leaves either the previous or the new file, never a torn one.
 */
export async function writeResultsFile(path: string, results: SweepResults): Promise<void> {
  await writeFileAtomic(path, serializeResults(results));
}

/**
 * Reads the results file at `path` for a sweep with `config`, or returns `undefined` when there
 * is none. Never mixes sweeps: the file must be of this format and version and embed a config
 * equal to `config` (after normalisation), and its cells must be cells of that sweep.
 *
 * @throws LetheError `E_FORMAT` naming the file when it is not JSON, of another format or
 *   version, or holds a malformed config or cell; `E_ARG` naming the file when its config
 *   differs from `config` (the message names the first differing field).
 */
export async function readResultsFile(
  path: string,
  config: SweepConfig,
): Promise<SweepResults | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
  return checkResults(json, config, path);
}
