import { LetheError } from '@lethe/core';
import type { DeviceAttentionPart, DeviceRowsPart } from '../cache/device-kv-cache';
import type { LayerPages } from '../cache/layer-pages';
import { attentionPlan } from './attention-plan';
import type { DeviceRows } from './device-rows';
import { runPagedAttention } from './paged-attention';

/** The parts of a launch: requests with their inputs, or requests reading a step's device rows. */
export type SharedParts =
  | { readonly rows?: undefined; readonly parts: readonly DeviceAttentionPart[] }
  | { readonly rows: DeviceRows; readonly parts: readonly DeviceRowsPart[] };

/**
 * The attention of `parts` over `layer` in one launch, their caches' shares of the layer's pool
 * being `shares` (checked by the cache): checks that they share one pool, list no cache twice
 * and all read a chunk or none, names a malformed request through `label`, lays out the plan and
 * the inputs (every part's queries, then every part's chunk keys and values; or, for parts
 * reading device rows, where each part's rows start) and runs the paged attention. Returns
 * `[ΣT, queryHeads, headDim]` in a new buffer the caller destroys.
 */
export function attendShared(
  layer: number,
  launch: SharedParts,
  shares: readonly LayerPages[],
  label: (argument: string, part: number) => string,
): GPUBuffer {
  const parts = launch.parts;
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
  if (launch.rows !== undefined) return attendRows(layer, launch.rows, launch.parts, shares, label);
  return attendInputs(layer, launch.parts, shares, label);
}

/** {@link attendShared} for parts that bring their queries and chunks (uploaded for the launch). */
function attendInputs(
  layer: number,
  parts: readonly DeviceAttentionPart[],
  shares: readonly LayerPages[],
  label: (argument: string, part: number) => string,
): GPUBuffer {
  const first = parts[0]!.cache;
  const pool = shares[0]!.pool;
  const chunked = parts[0]!.request?.chunk !== undefined;
  if (parts.some((part) => (part.request?.chunk !== undefined) !== chunked)) {
    throw new LetheError('E_ARG', 'mixes requests with and without a chunk', 'parts');
  }
  const { headDim, kvHeads } = first.geometry;
  const queryHeads = first.queryHeads;
  let counts: GPUBuffer | undefined;
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
    const { ranking, readCounts } = request;
    checkRankable(ranking, shares[i]!, label('ranking', i));
    if (readCounts !== undefined) {
      counts ??= readCounts.buffer;
      if (readCounts.buffer !== counts || !Number.isInteger(readCounts.offset)) {
        throw new LetheError(
          'E_ARG',
          "must name the launch's one counts buffer and an integer word offset",
          label('readCounts', i),
        );
      }
    }
    return {
      tableBase: shares[i]!.tableBase,
      pageSize: first.geometry.pageSize,
      queryPositions,
      ranges: request.ranges,
      liveBias: request.liveBias,
      chunkBias: chunk?.bias,
      live: cache.liveCounts(layer),
      ranking,
      ...(readCounts === undefined ? {} : { countSlot: (h: number) => readCounts.offset + h }),
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
    ...(counts === undefined ? {} : { counts }),
  });
}

/** {@link attendShared} for parts whose queries and chunks are a step's rows on the device. */
function attendRows(
  layer: number,
  rows: DeviceRows,
  parts: readonly DeviceRowsPart[],
  shares: readonly LayerPages[],
  label: (argument: string, part: number) => string,
): GPUBuffer {
  const first = parts[0]!.cache;
  const { kvHeads } = first.geometry;
  rows.requireShapeOf(first);
  const inputs = rows.inputsOf(layer);
  const logGates = rows.logGatesOf(layer);
  const sequences = parts.map(({ cache, request }, i) => {
    const { queryPositions, firstRow, chunkBias } = request;
    if (!(queryPositions instanceof Int32Array)) {
      throw new LetheError('E_DTYPE', 'must be an Int32Array', label('queryPositions', i));
    }
    const tokens = queryPositions.length;
    rows.requireSpan(firstRow, tokens, label('firstRow', i));
    if (chunkBias !== undefined) {
      checkFloats(chunkBias, tokens * kvHeads, label('chunkBias', i));
      if (logGates !== undefined) {
        throw new LetheError(
          'E_ARG',
          "biases the tokens' own keys, and the rows' gates do already",
          label('chunkBias', i),
        );
      }
    }
    const { ranking } = request;
    checkRankable(ranking, shares[i]!, label('ranking', i));
    return {
      tableBase: shares[i]!.tableBase,
      pageSize: first.geometry.pageSize,
      queryPositions,
      ranges: request.ranges,
      liveBias: request.liveBias,
      chunkBias,
      live: cache.liveCounts(layer),
      inputRow: firstRow,
      ranking,
      countSlot: (h: number) => rows.readCountSlot(layer, firstRow, h),
    };
  });
  const pool = shares[0]!.pool;
  return runPagedAttention({
    device: first.device,
    geometry: first.geometry,
    queryHeads: first.queryHeads,
    pool: pool.buffers,
    tableStride: pool.tableStride,
    plan: attentionPlan(sequences, label),
    inputs,
    chunk: true,
    counts: rows.flags,
    ...(logGates === undefined ? {} : { chunkBiasInputs: logGates }),
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

/** Throws `E_STATE` naming `argument` for a ranking on a cache that keeps no page bounds. */
function checkRankable(ranking: unknown, share: LayerPages, argument: string): void {
  if (ranking !== undefined && !share.pool.shape.bounded) {
    throw new LetheError(
      'E_STATE',
      'ranks pages, and the cache keeps no page bounds (create it with pageBounds: true)',
      argument,
    );
  }
}
