import { join } from 'node:path';
import { type Checkpoint, decodeCheckpoint, WEIGHTS_FILE } from './checkpoint';
import { checkDirectory, readFileBytes } from './node-fs';
import { parseShardIndex, WEIGHTS_INDEX_FILE } from './shard-index';
import { decodeShardedCheckpoint } from './sharded-checkpoint';

/** The weight files of a checkpoint directory as {@link readWeightFiles} read them. */
export type WeightFiles =
  | {
      readonly layout: 'single';
      /** Path of `model.safetensors`. */
      readonly path: string;
      readonly weights: Uint8Array;
    }
  | {
      readonly layout: 'sharded';
      /** Path of `model.safetensors.index.json`. */
      readonly path: string;
      /** The checkpoint directory (shard paths are relative to it). */
      readonly dir: string;
      /** Contents of the index. */
      readonly index: string;
      /** The shards the index names that exist, by their name in the index. */
      readonly shards: Readonly<Record<string, Uint8Array>>;
    };

/**
 * Reads the weights of a checkpoint directory in either Hugging Face layout:
 * `model.safetensors`, or — when there is none — `model.safetensors.index.json` and every shard
 * it names (see {@link parseShardIndex}: shard names that leave the directory are refused before
 * anything is read). A directory holding both loads `model.safetensors`, as transformers does.
 * A shard the index names that does not exist is left out of `shards`, for
 * {@link decodeWeightFiles} to name. Other file-system errors propagate unchanged; for a
 * directory with neither file, the `ENOENT` of `model.safetensors`.
 *
 * @throws LetheError `E_ARG` naming `dir` when it is not a string; `E_FORMAT` naming the index
 *   path for an index {@link parseShardIndex} refuses.
 */
export async function readWeightFiles(dir: string): Promise<WeightFiles> {
  checkDirectory(dir);
  const path = join(dir, WEIGHTS_FILE);
  try {
    return { layout: 'single', path, weights: await readFileBytes(path) };
  } catch (error) {
    if (!isMissing(error)) throw error;
    const indexPath = join(dir, WEIGHTS_INDEX_FILE);
    let index: string;
    try {
      index = new TextDecoder().decode(await readFileBytes(indexPath));
    } catch (indexError) {
      throw isMissing(indexError) ? error : indexError;
    }
    const shards: Record<string, Uint8Array> = {};
    for (const shard of parseShardIndex(index, indexPath).shards) {
      try {
        shards[shard] = await readFileBytes(join(dir, shard));
      } catch (shardError) {
        if (!isMissing(shardError)) throw shardError;
      }
    }
    return { layout: 'sharded', path: indexPath, dir, index, shards };
  }
}

/**
 * Decodes the weight files of a directory with the text of its `config.json`:
 * {@link decodeCheckpoint} for one file, {@link decodeShardedCheckpoint} for shards, their
 * errors naming the files by their paths.
 *
 * @throws LetheError as {@link decodeCheckpoint} / {@link decodeShardedCheckpoint}.
 */
export function decodeWeightFiles(config: string, files: WeightFiles): Checkpoint {
  if (files.layout === 'single') {
    return decodeCheckpoint({ config, weights: files.weights }, { weightsName: files.path });
  }
  return decodeShardedCheckpoint(
    { config, index: files.index, shards: files.shards },
    { indexName: files.path, shardName: (shard) => join(files.dir, shard) },
  );
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
