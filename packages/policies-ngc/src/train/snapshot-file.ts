import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSafetensors, type SafetensorsTensor, serializeSafetensors } from '@lethe/core';
import { DecoderModel } from '@lethe/model';
import { writeFileAtomic } from '@lethe/model/node';
import type { PolicySnapshot } from '@lethe/rl-grpo';

/** A learner's weights as a file in a shared directory, named by its content. */
export interface SnapshotFile {
  /** `<dir>/ngc-weights-<hash>.safetensors`. */
  readonly path: string;
  /** SHA-256 of the file, hex. */
  readonly sha256: string;
}

/**
 * Writes `snapshot`'s weights (F32 safetensors, bit-exact) to `dir` (made if missing) under a name
 * made of their hash, atomically, unless that file is there already: the same weights give the same file, so a
 * resumed trainer at the same step points its workers at the file they read before.
 */
export async function writeSnapshotFile(
  dir: string,
  snapshot: PolicySnapshot,
): Promise<SnapshotFile> {
  const all = new Float32Array(snapshot.buffer);
  const tensors: Record<string, SafetensorsTensor> = {};
  for (const { name, shape, offset } of snapshot.layout) {
    const size = shape.reduce((a, b) => a * b, 1);
    tensors[name] = { dtype: 'F32', shape, data: all.slice(offset, offset + size) };
  }
  const bytes = serializeSafetensors(tensors);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const path = join(dir, `ngc-weights-${sha256.slice(0, 24)}.safetensors`);
  if (!existsSync(path)) {
    await mkdir(dir, { recursive: true });
    await writeFileAtomic(path, bytes);
  }
  return { path, sha256 };
}

/** Removes a snapshot file no call needs any more (missing already: nothing to do). */
export async function removeSnapshotFile(file: SnapshotFile): Promise<void> {
  await rm(file.path, { force: true });
}

/** The model of `config` with the weights of a snapshot file. */
export async function readSnapshotModel(
  path: string,
  config: DecoderModel['config'],
): Promise<DecoderModel> {
  const { tensors } = parseSafetensors(new Uint8Array(await readFile(path)), { copy: true });
  return DecoderModel.fromTensors(
    config,
    Object.fromEntries(
      Object.entries(tensors).map(([name, t]) => [
        name,
        { shape: [...t.shape], data: t.data as Float32Array },
      ]),
    ),
  );
}
