import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Checkpoint,
  CONFIG_FILE,
  decodeCheckpoint,
  encodeCheckpoint,
  WEIGHTS_FILE,
} from './checkpoint';
import type { FloatStorageDtype } from './float32-conversion';
import { readFileBytes, writeFileAtomic } from './node-fs';

/** Options of {@link saveCheckpoint}. */
export interface SaveCheckpointOptions {
  /** Storage dtype of the weights (default `F32`, bit-exact). */
  dtype?: FloatStorageDtype;
}

/**
 * Writes a checkpoint directory in the HF layout: `model.safetensors` and `config.json`
 * (see {@link encodeCheckpoint}), each written atomically, weights first. The directory is
 * created if needed. Everything is validated before any file is touched.
 */
export async function saveCheckpoint(
  dir: string,
  checkpoint: Checkpoint,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  const files = encodeCheckpoint(checkpoint, options.dtype);
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, WEIGHTS_FILE), files.weights);
  await writeFileAtomic(join(dir, CONFIG_FILE), files.config);
}

/**
 * Reads and validates a checkpoint directory (`config.json` + `model.safetensors`, ours or
 * a single-shard HF one), returning float32 tensors (see {@link decodeCheckpoint}).
 * File-system errors (e.g. `ENOENT`) propagate unchanged.
 */
export async function loadCheckpoint(dir: string): Promise<Checkpoint> {
  const config = new TextDecoder().decode(await readFileBytes(join(dir, CONFIG_FILE)));
  const weights = await readFileBytes(join(dir, WEIGHTS_FILE));
  return decodeCheckpoint({ config, weights });
}
