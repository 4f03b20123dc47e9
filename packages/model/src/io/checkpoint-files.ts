import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FloatStorageDtype } from '@lethe/core';
import { LetheError } from '@lethe/tensor';
import { checkObject, kindOf } from '../option-checks';
import {
  type Checkpoint,
  CONFIG_FILE,
  decodeCheckpoint,
  encodeCheckpoint,
  WEIGHTS_FILE,
} from './checkpoint';
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
 * Reads and validates a checkpoint directory (`config.json` + `model.safetensors`, ours or
 * a single-shard HF one), returning float32 tensors (see {@link decodeCheckpoint}; its errors
 * name the weights file by its path). File-system errors (e.g. `ENOENT`) propagate unchanged.
 *
 * @throws LetheError `E_ARG` naming `dir` when it is not a string; {@link decodeCheckpoint}'s
 *   errors.
 */
export async function loadCheckpoint(dir: string): Promise<Checkpoint> {
  checkDirectory(dir);
  const config = new TextDecoder().decode(await readFileBytes(join(dir, CONFIG_FILE)));
  const weightsPath = join(dir, WEIGHTS_FILE);
  const weights = await readFileBytes(weightsPath);
  return decodeCheckpoint({ config, weights }, { weightsName: weightsPath });
}

function checkDirectory(dir: unknown): void {
  if (typeof dir !== 'string') {
    throw new LetheError('E_ARG', `must be a directory path, got ${kindOf(dir)}`, 'dir');
  }
}
