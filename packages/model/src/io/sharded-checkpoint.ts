import {
  LetheError,
  parseSafetensors,
  type SafetensorsFile,
  type SafetensorsTensor,
} from '@lethe/core';
import { checkObject, kindOf } from '../option-checks';
import {
  type Checkpoint,
  CONFIG_FILE,
  checkFormatVersion,
  checkpointFromStored,
  parseConfigText,
} from './checkpoint';
import { parseShardIndex, WEIGHTS_INDEX_FILE } from './shard-index';

/** The files of a sharded checkpoint, ready to decode (as read from disk or fetched). */
export interface ShardedCheckpointFiles {
  /** Contents of `config.json`. */
  readonly config: string;
  /** Contents of `model.safetensors.index.json`. */
  readonly index: string;
  /**
   * Bytes of the shards, by the file name the index gives them
   * (`model-00001-of-00002.safetensors`, …). Files the index does not name are ignored.
   */
  readonly shards: Readonly<Record<string, Uint8Array>>;
}

/** Options of {@link decodeShardedCheckpoint}. */
export interface DecodeShardedCheckpointOptions {
  /** How errors name the index (default `model.safetensors.index.json`), e.g. its path. */
  readonly indexName?: string;
  /** How errors name a shard, given its file name in the index (default: that name), e.g. its path. */
  readonly shardName?: (file: string) => string;
}

/**
 * Decodes and validates a sharded checkpoint — `config.json`, `model.safetensors.index.json`
 * (see {@link parseShardIndex}) and the shards it names — into one checkpoint, exactly as
 * {@link decodeCheckpoint} decodes the same tensors stored in one `model.safetensors` (any float
 * dtype, widened to float32; a tied copy of the LM head dropped; every weight finite). The
 * index and the shards must agree: every tensor of a shard is in the index and mapped to that
 * shard, stored once, and every tensor the index maps is in its shard.
 *
 * @throws LetheError `E_ARG` naming `files`, `files.config`, `files.index`, `files.shards` or
 *   `options` when they are not of the documented types; `E_FORMAT` naming the index for an
 *   index that is not JSON, lacks a `weight_map` or names a shard outside the directory
 *   (`../x`, `/x`); `E_CHECKPOINT` naming a shard the index names that `files.shards` lacks;
 *   `E_FORMAT` naming a shard that is not valid safetensors or of another Lethe format version;
 *   `E_CHECKPOINT` naming the tensor (the message naming the files) for a tensor stored in two
 *   shards, stored in a shard but absent from the index or mapped to another shard, or mapped
 *   to a shard that lacks it; then {@link decodeCheckpoint}'s `E_ARG` (invalid config),
 *   `E_FORMAT` (config not JSON) and `E_CHECKPOINT` (tensors that do not fit the config, NaN
 *   or ±Infinity weights).
 */
export function decodeShardedCheckpoint(
  files: ShardedCheckpointFiles,
  options: DecodeShardedCheckpointOptions = {},
): Checkpoint {
  checkObject(files, 'files', 'an object with the config, index and shard files');
  checkObject(options, 'options');
  if (typeof files.config !== 'string') {
    throw new LetheError('E_ARG', `must be the text of ${CONFIG_FILE}`, 'files.config');
  }
  if (typeof files.index !== 'string') {
    throw new LetheError('E_ARG', `must be the text of ${WEIGHTS_INDEX_FILE}`, 'files.index');
  }
  checkObject(files.shards, 'files.shards', 'an object of shard bytes by file name');
  const indexName = options.indexName ?? WEIGHTS_INDEX_FILE;
  const shardName = options.shardName ?? ((file: string) => file);
  if (typeof shardName !== 'function') {
    throw new LetheError('E_ARG', `must be a function, got ${kindOf(shardName)}`, 'shardName');
  }
  const config = parseConfigText(files.config);
  const index = parseShardIndex(files.index, indexName);
  const locations = new Map<string, string[]>();
  const stored: Record<string, SafetensorsTensor> = {};
  for (const shard of index.shards) {
    const name = shardName(shard);
    const bytes = Object.hasOwn(files.shards, shard) ? files.shards[shard] : undefined;
    if (bytes === undefined) {
      throw new LetheError('E_CHECKPOINT', `is named by ${indexName} but missing`, name);
    }
    const file = parseShard(bytes, name);
    for (const [tensor, value] of Object.entries(file.tensors)) {
      const shards = locations.get(tensor);
      if (shards === undefined) locations.set(tensor, [shard]);
      else shards.push(shard);
      stored[tensor] = value;
    }
  }
  for (const [tensor, shards] of locations) {
    const where = shards.map(shardName).join(' and ');
    if (shards.length > 1) {
      throw new LetheError('E_CHECKPOINT', `is stored in two shards: ${where}`, tensor);
    }
    const mapped = Object.hasOwn(index.weightMap, tensor) ? index.weightMap[tensor] : undefined;
    if (mapped === undefined) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is stored in ${where} but ${indexName} does not list it`,
        tensor,
      );
    }
    if (mapped !== shards[0]) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is stored in ${where} but ${indexName} maps it to ${shardName(mapped)}`,
        tensor,
      );
    }
  }
  for (const [tensor, shard] of Object.entries(index.weightMap)) {
    if (!locations.has(tensor)) {
      throw new LetheError(
        'E_CHECKPOINT',
        `${indexName} maps it to ${shardName(shard)}, which does not hold it`,
        tensor,
      );
    }
  }
  return checkpointFromStored(stored, config, indexName);
}

/**
 * Parses one shard; its format errors are re-issued about the shard (the tensor they name, if
 * any, moves into the message).
 */
function parseShard(bytes: Uint8Array, name: string): SafetensorsFile {
  let file: SafetensorsFile;
  try {
    file = parseSafetensors(bytes);
  } catch (error) {
    if (!(error instanceof LetheError) || error.argument === name) throw error;
    const prefix = `[${error.code}] ${error.argument === undefined ? '' : `${error.argument}: `}`;
    const message = error.message.startsWith(prefix)
      ? error.message.slice(prefix.length)
      : error.message;
    throw new LetheError(
      error.code,
      error.argument === undefined ? message : `${error.argument}: ${message}`,
      name,
    );
  }
  checkFormatVersion(file.metadata, name);
  return file;
}
