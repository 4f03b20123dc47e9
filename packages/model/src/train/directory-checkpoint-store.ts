import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileBytes, writeFileAtomic } from '../io/node';
import type { CheckpointStore } from './checkpoint-store';

/** File name of the checkpoint inside a {@link directoryCheckpointStore} directory. */
export const SFT_CHECKPOINT_FILE = 'sft-checkpoint.safetensors';

/**
 * A Node {@link CheckpointStore} keeping `<directory>/<fileName>` (default
 * `sft-checkpoint.safetensors`; another trainer passes its own name). Writes go
 * through a temporary file in the same directory, fsync and rename (atomic); the directory is
 * created on the first write. Node-only (imports `node:fs`).
 *
 * @example
 * ```ts
 * const trainer = new SftTrainer({ ...options, checkpoint: directoryCheckpointStore('runs/sft') });
 * ```
 */
export function directoryCheckpointStore(
  directory: string,
  fileName: string = SFT_CHECKPOINT_FILE,
): CheckpointStore & { readonly path: string } {
  const path = join(directory, fileName);
  return {
    path,
    read: async () => {
      try {
        return await readFileBytes(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    write: async (bytes) => {
      await mkdir(directory, { recursive: true });
      await writeFileAtomic(path, bytes);
    },
  };
}
