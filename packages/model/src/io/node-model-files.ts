import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError, unreadableFile } from '@lethe/core';
import type { ModelFiles } from '../directory/model-files';
import { checkDirectory, readFileBytes } from './node-fs';

/**
 * The files of the model directory `dir` on disk: a missing file (`ENOENT`) reads as
 * `undefined`; any other failure is `E_CHECKPOINT` naming the file and why (see
 * `unreadableFile` of `@lethe/core`).
 *
 * @throws LetheError `E_ARG` naming `dir` when it is not a string.
 */
export function nodeModelFiles(dir: string): ModelFiles {
  checkDirectory(dir);
  const pathOf = (name: string) => join(dir, name);
  return {
    location: dir,
    pathOf,
    async read(name) {
      try {
        return await readFileBytes(pathOf(name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw unreadableFile(pathOf(name), error);
      }
    },
  };
}

/**
 * Checks that `dir` is an existing directory.
 *
 * @throws LetheError `E_CHECKPOINT` naming `dir` when it is missing, unreadable or a file.
 */
export async function assertDirectory(dir: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(dir)).isDirectory();
  } catch (error) {
    throw unreadableFile(dir, error);
  }
  if (!isDirectory) {
    throw new LetheError('E_CHECKPOINT', 'is not a directory (expected a model directory)', dir);
  }
}
