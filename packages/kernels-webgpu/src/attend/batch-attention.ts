import { LetheError } from '@lethe/core';
import type { DeviceAttentionPart } from '../cache/device-kv-cache';
import type { LayerPages } from '../cache/layer-pages';
import { attentionPlan } from './attention-plan';
import { runPagedAttention } from './paged-attention';

/**
 * The attention of `parts` over `layer` in one launch, their caches' shares of the layer's pool
 * being `shares` (checked by the cache): checks that they share one pool, list no cache twice
 * and all read a chunk or none, names a malformed request through `label`, lays out the plan and
 * the inputs (every part's queries, then every part's chunk keys and values) and runs the paged
 * attention. Returns `[ΣT, queryHeads, headDim]` in a new buffer the caller destroys.
 */
export function attendShared(
  layer: number,
  parts: readonly DeviceAttentionPart[],
  shares: readonly LayerPages[],
  label: (argument: string, part: number) => string,
): GPUBuffer {
  const first = parts[0]!.cache;
  const pool = shares[0]!.pool;
  if (shares.some((share) => share.pool !== pool)) {
    throw new LetheError(
      'E_ARG',
      'the caches share no page pool (different shapes or devices)',
      'parts',
    );
  }
  if (new Set(parts.map((part) => part.cache)).size !== parts.length) {
    throw new LetheError('E_ARG', 'lists a cache twice', 'parts');
  }
  const chunked = parts[0]!.request?.chunk !== undefined;
  if (parts.some((part) => (part.request?.chunk !== undefined) !== chunked)) {
    throw new LetheError('E_ARG', 'mixes requests with and without a chunk', 'parts');
  }
  const { headDim, kvHeads } = first.geometry;
  const queryHeads = first.queryHeads;
  const sequences = parts.map(({ cache, request }, i) => {
    const { queryPositions, queries, chunk } = request;
    if (!(queryPositions instanceof Int32Array)) {
      throw new LetheError('E_DTYPE', 'must be an Int32Array', label('queryPositions', i));
    }
    const tokens = queryPositions.length;
    checkFloats(queries, tokens * queryHeads * headDim, label('queries', i));
    if (chunk !== undefined) {
      checkFloats(chunk.keys, tokens * kvHeads * headDim, label('chunk.keys', i));
      checkFloats(chunk.values, tokens * kvHeads * headDim, label('chunk.values', i));
      if (chunk.bias !== undefined) {
        checkFloats(chunk.bias, tokens * kvHeads, label('chunk.bias', i));
      }
    }
    return {
      tableBase: shares[i]!.tableBase,
      queryPositions,
      ranges: request.ranges,
      liveBias: request.liveBias,
      chunkBias: chunk?.bias,
      live: cache.liveCounts(layer),
    };
  });
  const plan = attentionPlan(sequences, label);
  const queryFloats = plan.tokens * queryHeads * headDim;
  const chunkFloats = plan.tokens * kvHeads * headDim;
  const inputs = new Float32Array(queryFloats + (chunked ? 2 * chunkFloats : 0));
  let at = 0;
  for (const { request } of parts) {
    inputs.set(request.queries, at * queryHeads * headDim);
    if (request.chunk !== undefined) {
      inputs.set(request.chunk.keys, queryFloats + at * kvHeads * headDim);
      inputs.set(request.chunk.values, queryFloats + chunkFloats + at * kvHeads * headDim);
    }
    at += request.queryPositions.length;
  }
  return runPagedAttention({
    device: first.device,
    geometry: first.geometry,
    queryHeads,
    pool: pool.buffers,
    tableStride: pool.tableStride,
    plan,
    inputs,
    chunk: chunked,
  });
}

/** Checks that `array` is a Float32Array of `length` floats. */
function checkFloats(array: unknown, length: number, argument: string): void {
  if (!(array instanceof Float32Array)) {
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  }
  if (array.length !== length) {
    throw new LetheError('E_SHAPE', `must hold ${length} floats, got ${array.length}`, argument);
  }
}
