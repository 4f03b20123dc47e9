import type { KVCacheStore } from '@lethe/kv-cache';
import { LetheError } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';

/** What one cached step appends to one layer of one cache (views into the step's download). */
export interface LayerAppend {
  readonly cache: KVCacheStore;
  /** Index of the sequence in the step's batch. */
  readonly sequence: number;
  readonly layer: number;
  /** `[T, kvHeads, headDim]` after RoPE. */
  readonly keys: Float32Array;
  /** `[T, kvHeads, headDim]`. */
  readonly values: Float32Array;
  /** `[T]`. */
  readonly positions: Int32Array;
  /** `[T, kvHeads]` when the cache stores gates. */
  readonly gates: Float32Array | undefined;
  /** `[T, queryHeads, headDim]` when the cache records queries. */
  readonly queries: Float32Array | undefined;
}

/** How a cached step's single download is laid out, and which caches record queries. */
export interface StepDownload {
  /** Real tokens per sequence (chunks are right-padded to `width`). */
  readonly lengths: Int32Array;
  /** Padded chunk width `T`. */
  readonly width: number;
  /** `[B, T]` positions of the chunk tokens. */
  readonly positions: Int32Array;
  /**
   * Per layer, in order: keys and values `[B, T, Hkv, hd]`, then (when any cache records
   * queries) queries `[B, T, Hq, hd]`, then (with gates) gates `[B, T, Hkv]`.
   */
  readonly outgoing: Float32Array;
  /** Whether each cache records queries (query window or attention tracking). */
  readonly recordQueries: readonly boolean[];
  /** Whether the download holds gates (a key-bias hook ran; caches that store gates keep theirs). */
  readonly gated: boolean;
}

/**
 * Splits a cached step's download into one {@link LayerAppend} per cache and layer (cache by
 * cache, layers in order; padding rows dropped). Touches no cache.
 */
export function planAppends(
  config: ModelConfig,
  caches: readonly KVCacheStore[],
  download: StepDownload,
): LayerAppend[] {
  const { lengths, width, positions, outgoing, recordQueries, gated } = download;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  const batch = lengths.length;
  const kvSize = kvHeads * headDim;
  const querySize = queryHeads * headDim;
  const anyRecord = recordQueries.includes(true);
  let offset = 0;
  const take = (perToken: number): Float32Array => {
    const block = outgoing.subarray(offset, offset + batch * width * perToken);
    offset += block.length;
    return block;
  };
  const layers = Array.from({ length: config.num_hidden_layers }, () => ({
    keys: take(kvSize),
    values: take(kvSize),
    queries: anyRecord ? take(querySize) : undefined,
    gates: gated ? take(kvHeads) : undefined,
  }));
  return caches.flatMap((cache, b) => {
    const rows = (perToken: number, block: Float32Array) =>
      block.subarray(b * width * perToken, (b * width + lengths[b]!) * perToken);
    const tokenPositions = positions.subarray(b * width, b * width + lengths[b]!);
    return layers.map((block, layer) => ({
      cache,
      sequence: b,
      layer,
      keys: rows(kvSize, block.keys),
      values: rows(kvSize, block.values),
      positions: tokenPositions,
      gates: cache.storeGates ? rows(kvHeads, block.gates!) : undefined,
      queries: recordQueries[b] ? rows(querySize, block.queries!) : undefined,
    }));
  });
}

/**
 * Throws before any cache is touched when a planned append holds a NaN or ±Infinity, which every
 * `KVCacheStore` refuses: a step must not leave some layers appended and others not.
 *
 * @throws LetheError `E_STATE` naming `model`: its weights or activations overflowed (the
 *   message names the layer, sequence, tensor and value).
 */
export function checkAppendsFinite(appends: readonly LayerAppend[]): void {
  for (const append of appends) {
    for (const kind of ['keys', 'values', 'gates', 'queries'] as const) {
      const data = append[kind];
      if (data === undefined) continue;
      for (let i = 0; i < data.length; i++) {
        if (!Number.isFinite(data[i]!)) {
          throw new LetheError(
            'E_STATE',
            `layer ${append.layer} produced ${kind} with a non-finite value (${data[i]}) for sequence ${append.sequence}: its weights or activations overflow; no cache was changed`,
            'model',
          );
        }
      }
    }
  }
}

/** Appends every planned entry and records the queries, cache by cache, layers in order. */
export function applyAppends(appends: readonly LayerAppend[]): void {
  for (const { cache, layer, keys, values, positions, gates, queries } of appends) {
    cache.append(layer, keys, values, positions, gates);
    if (queries !== undefined) cache.recordQueries(layer, queries, positions);
  }
}
