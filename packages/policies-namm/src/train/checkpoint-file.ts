import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '@lethe/model/node';
import { decodeNammCheckpoint, encodeNammCheckpoint, type NammCheckpoint } from './namm-checkpoint';

/**
 * Writes a NAMM evolution checkpoint to `path` atomically (`encodeNammCheckpoint`'s JSON),
 * creating its directory when missing:
 * pass `(checkpoint) => writeNammCheckpoint(path, checkpoint)` as `onCheckpoint`.
 */
export async function writeNammCheckpoint(path: string, checkpoint: NammCheckpoint): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, encodeNammCheckpoint(checkpoint));
}

/**
 * Reads the checkpoint at `path`, or undefined when there is no such file (a run starting
 * afresh): pass it as `resumeFrom`.
 *
 * @throws LetheError `E_FORMAT` naming `path` (or its field) for a file that is not a NAMM
 *   evolution checkpoint of this version (see `decodeNammCheckpoint`); the file system's error
 *   when it cannot be read.
 */
export async function readNammCheckpoint(path: string): Promise<NammCheckpoint | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return decodeNammCheckpoint(text, path);
}
