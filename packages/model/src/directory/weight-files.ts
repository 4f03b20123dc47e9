import { LetheError } from '@lethe/core';
import { type Checkpoint, decodeCheckpoint, WEIGHTS_FILE } from '../io/checkpoint';
import { parseShardIndex, WEIGHTS_INDEX_FILE } from '../io/shard-index';
import { decodeShardedCheckpoint } from '../io/sharded-checkpoint';
import type { ModelFiles } from './model-files';

/** The weight files of a model directory as {@link readWeightFiles} read them. */
export type WeightFiles =
  | {
      readonly layout: 'single';
      /** How `model.safetensors` is named in messages. */
      readonly path: string;
      readonly weights: Uint8Array;
    }
  | {
      readonly layout: 'sharded';
      /** How `model.safetensors.index.json` is named in messages. */
      readonly path: string;
      /** Contents of the index. */
      readonly index: string;
      /** The shards the index names that exist, by their name in the index. */
      readonly shards: Readonly<Record<string, Uint8Array>>;
      /** How a shard is named in messages. */
      readonly shardPath: (shard: string) => string;
    };

/**
 * Reads the weights of a model directory in either Hugging Face layout: `model.safetensors`, or —
 * when there is none — `model.safetensors.index.json` and every shard it names (see
 * {@link parseShardIndex}: shard names that leave the directory are refused before anything is
 * read). A directory holding both loads `model.safetensors`, as transformers does. A shard the
 * index names that does not exist is left out of `shards`, for {@link decodeWeightFiles} to name.
 *
 * @throws LetheError `E_CHECKPOINT` naming `model.safetensors` when neither layout is there;
 *   `E_FORMAT` naming the index for an index {@link parseShardIndex} refuses; the reader's errors.
 */
export async function readWeightFiles(files: ModelFiles): Promise<WeightFiles> {
  const weights = await files.read(WEIGHTS_FILE);
  if (weights !== undefined) {
    return { layout: 'single', path: files.pathOf(WEIGHTS_FILE), weights };
  }
  const path = files.pathOf(WEIGHTS_INDEX_FILE);
  const indexBytes = await files.read(WEIGHTS_INDEX_FILE);
  if (indexBytes === undefined) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is missing, and so is ${WEIGHTS_INDEX_FILE}: the directory holds no weights`,
      files.pathOf(WEIGHTS_FILE),
    );
  }
  const index = new TextDecoder().decode(indexBytes);
  const shards: Record<string, Uint8Array> = {};
  for (const shard of parseShardIndex(index, path).shards) {
    const bytes = await files.read(shard);
    if (bytes !== undefined) shards[shard] = bytes;
  }
  return { layout: 'sharded', path, index, shards, shardPath: (shard) => files.pathOf(shard) };
}

/**
 * Decodes the weight files of a directory with the text of its `config.json`:
 * {@link decodeCheckpoint} for one file, {@link decodeShardedCheckpoint} for shards, their
 * errors naming the files as the reader names them.
 *
 * @throws LetheError as {@link decodeCheckpoint} / {@link decodeShardedCheckpoint}.
 */
export function decodeWeightFiles(config: string, files: WeightFiles): Checkpoint {
  if (files.layout === 'single') {
    return decodeCheckpoint({ config, weights: files.weights }, { weightsName: files.path });
  }
  return decodeShardedCheckpoint(
    { config, index: files.index, shards: files.shards },
    { indexName: files.path, shardName: files.shardPath },
  );
}
