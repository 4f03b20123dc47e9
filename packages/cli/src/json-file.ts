import { readFile } from 'node:fs/promises';
import { LetheError, unreadableFile } from '@lethe/core';

/**
 * Reads and parses the JSON file `path`.
 *
 * @throws LetheError naming `path`: `E_ARG` when it cannot be read (and why), `E_FORMAT`
 *   when it is not JSON.
 */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw unreadableFile(path, error, 'E_ARG');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
}
