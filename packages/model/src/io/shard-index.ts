import { LetheError } from '@lethe/core';

/** File name of the index of a sharded checkpoint (as HF `save_pretrained` writes it). */
export const WEIGHTS_INDEX_FILE = 'model.safetensors.index.json';

/** A parsed `model.safetensors.index.json`. */
export interface ShardIndex {
  /** The index's `metadata` (HF writes `total_size`), `{}` when absent. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Shard file of every tensor, by tensor name (the index's `weight_map`). */
  readonly weightMap: Readonly<Record<string, string>>;
  /** The distinct shard files, in the order the weight map first names them. */
  readonly shards: readonly string[];
}

/**
 * Parses and checks the index of a sharded safetensors checkpoint:
 * `{"metadata": {...}, "weight_map": {tensor name: shard file}}`. Shard files are paths
 * relative to the checkpoint directory and must stay inside it: a name that is absolute
 * (`/x`, `C:x`, `\\x`), holds a `..` or `.` segment, an empty segment, a backslash or a NUL is
 * refused, so a loader never reads a file the index points outside the directory.
 *
 * @param text the index file's contents.
 * @param source how errors name the index (default `model.safetensors.index.json`), e.g. its
 *   path.
 * @throws LetheError `E_FORMAT` naming `source` when the text is not JSON, not an object,
 *   has no `weight_map` object or an empty one, a `metadata` that is not an object, a shard
 *   name that is not a string, or a shard name that escapes the directory.
 */
export function parseShardIndex(text: string, source: string = WEIGHTS_INDEX_FILE): ShardIndex {
  if (typeof text !== 'string') {
    throw new LetheError('E_ARG', `must be the text of ${WEIGHTS_INDEX_FILE}`, 'index');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not valid JSON (${(error as Error).message})`, source);
  }
  if (!isPlainObject(json)) {
    throw new LetheError('E_FORMAT', 'must be a JSON object with a weight_map', source);
  }
  const metadata = json.metadata ?? {};
  if (!isPlainObject(metadata)) {
    throw new LetheError('E_FORMAT', 'metadata must be an object', source);
  }
  const weightMap = json.weight_map;
  if (!isPlainObject(weightMap)) {
    throw new LetheError(
      'E_FORMAT',
      'weight_map must be an object mapping tensor names to shard files',
      source,
    );
  }
  const entries = Object.entries(weightMap);
  if (entries.length === 0) throw new LetheError('E_FORMAT', 'weight_map is empty', source);
  const shards = new Set<string>();
  for (const [tensor, file] of entries) {
    if (typeof file !== 'string') {
      throw new LetheError(
        'E_FORMAT',
        `weight_map[${JSON.stringify(tensor)}] must be a shard file name, got ${JSON.stringify(file)}`,
        source,
      );
    }
    const problem = shardNameProblem(file);
    if (problem !== undefined) {
      throw new LetheError(
        'E_FORMAT',
        `weight_map[${JSON.stringify(tensor)}] names the shard ${JSON.stringify(file)}, which ${problem}; shard files must lie inside the checkpoint directory`,
        source,
      );
    }
    shards.add(file);
  }
  return {
    metadata: { ...metadata },
    weightMap: Object.fromEntries(entries) as Record<string, string>,
    shards: [...shards],
  };
}

/** Why `file` may not name a shard inside the directory, or undefined when it may. */
function shardNameProblem(file: string): string | undefined {
  if (file.includes('\0')) return 'holds a NUL character';
  if (file.includes('\\')) return 'holds a backslash';
  if (file.startsWith('/') || /^[A-Za-z]:/.test(file)) return 'is an absolute path';
  for (const segment of file.split('/')) {
    if (segment === '') return 'has an empty path segment';
    if (segment === '.' || segment === '..') return `has a "${segment}" path segment`;
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
