import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FloatStorageDtype } from '@lethe/core';
import { LetheError } from '@lethe/core';
import { decodeWeightFiles, readWeightFiles } from '../directory/weight-files';
import { checkObject } from '../option-checks';
import { type Checkpoint, CONFIG_FILE, encodeCheckpoint, WEIGHTS_FILE } from './checkpoint';
import { checkDirectory, writeFileAtomic } from './node-fs';
import { nodeModelFiles } from './node-model-files';

/** Options of {@link saveCheckpoint}. */
export interface SaveCheckpointOptions {
  /** Storage dtype of the weights (default `F32`, bit-exact). */
  dtype?: FloatStorageDtype;
}

/**
 * Writes a checkpoint directory in the HF layout: `model.safetensors` and `config.json`
 * (see {@link encodeCheckpoint}), each written atomically, weights first. The directory is
 * created if needed. Everything is validated before any file is touched.
 *
 * @throws LetheError `E_ARG` naming `dir` or `options` when they are not a string and an
 *   object; {@link encodeCheckpoint}'s errors.
 */
export async function saveCheckpoint(
  dir: string,
  checkpoint: Checkpoint,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  checkDirectory(dir);
  checkObject(options, 'options');
  const files = encodeCheckpoint(checkpoint, options.dtype);
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, WEIGHTS_FILE), files.weights);
  await writeFileAtomic(join(dir, CONFIG_FILE), files.config);
}

/**
 * Reads and validates a checkpoint directory in either Hugging Face layout: `config.json` with
 * `model.safetensors` (ours, or a single-file HF one) or with `model.safetensors.index.json` and
 * its shards (see {@link readWeightFiles}), returning float32 tensors (see
 * {@link decodeWeightFiles}; its errors name the files by their paths).
 *
 * @throws LetheError `E_ARG` naming `dir` when it is not a string; `E_CHECKPOINT` naming a file
 *   that is missing or cannot be read (see {@link nodeModelFiles}); {@link readWeightFiles}'s and
 *   {@link decodeWeightFiles}'s errors.
 */
export async function loadCheckpoint(dir: string): Promise<Checkpoint> {
  const files = nodeModelFiles(dir);
  const config = await files.read(CONFIG_FILE);
  if (config === undefined) {
    throw new LetheError('E_CHECKPOINT', 'is missing', files.pathOf(CONFIG_FILE));
  }
  return decodeWeightFiles(new TextDecoder().decode(config), await readWeightFiles(files));
}
