import { LetheError } from '@lethe/core';
import type { KVCacheStore } from '@lethe/kv-cache';
import type { ModelConfig } from '../io/index';
import type { PackedRows } from './packed-rows';

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

/** What one layer of a cached step downloaded, as the step's packed rows ({@link PackedRows}). */
export interface AppendRows {
  /** `[N, Hkv, hd]` after RoPE. */
  readonly keys: Float32Array;
  /** `[N, Hkv, hd]`. */
  readonly values: Float32Array;
  /** `[N, Hq, hd]` after RoPE. */
  readonly queries: Float32Array;
  /** `[N, Hkv]`, when a gate hook ran (caches that store gates keep theirs). */
  readonly gates: Float32Array | undefined;
}

/** A cached step's downloads and which caches record queries. */
export interface StepDownload {
  /** The step's tokens as rows. */
  readonly rows: PackedRows;
  /** One per layer, in order. */
  readonly layers: readonly AppendRows[];
  /** Whether each cache records queries (query window or attention tracking). */
  readonly recordQueries: readonly boolean[];
}

/**
 * Splits a cached step's downloads into one {@link LayerAppend} per cache and layer (cache by
 * cache, layers in order). Touches no cache.
 */
export function planAppends(
  config: ModelConfig,
  caches: readonly KVCacheStore[],
  download: StepDownload,
): LayerAppend[] {
  const { rows, layers, recordQueries } = download;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  return caches.flatMap((cache, b) => {
    const first = rows.starts[b]!;
    const end = first + rows.lengths[b]!;
    const own = (perToken: number, block: Float32Array) =>
      block.subarray(first * perToken, end * perToken);
    return layers.map((block, layer) => ({
      cache,
      sequence: b,
      layer,
      keys: own(kvHeads * headDim, block.keys),
      values: own(kvHeads * headDim, block.values),
      positions: rows.positions.subarray(first, end),
      gates: cache.storeGates ? own(kvHeads, block.gates!) : undefined,
      queries: recordQueries[b] ? own(queryHeads * headDim, block.queries) : undefined,
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
