import { LetheError } from '@lethe/core';
import { Accounting } from './accounting';
import { ByteReader, ByteWriter, requireLittleEndianHost } from './byte-io';
import type { CacheState } from './cache-state';
import { slotLayoutOf } from './cache-state';
import { crc32 } from './crc32';
import { GrowableInt32Array } from './growable-int32';
import { type HeadColumns, HeadStore } from './head-store';
import { LayerState } from './layer-state';
import { type ResolvedCacheOptions, resolveCacheOptions } from './options';
import { QueryWindow } from './query-window';
import { STILL_LIVE, VisibilityTrace } from './visibility-trace';

/** First four bytes of a serialised cache: ASCII `LKVC`. */
export const CACHE_FORMAT_MAGIC = new Uint8Array([0x4c, 0x4b, 0x56, 0x43]);
/** Version of the binary cache format written by this package. */
export const CACHE_FORMAT_VERSION = 1;
/** Header: magic, version, payload length, CRC-32 of the payload (all u32 little-endian). */
const HEADER_BYTES = 16;

const MAX_INT32 = 0x7fffffff;
const FLAG_VALUES = 1;
const FLAG_GATES = 2;
const FLAG_ATTENTION = 4;
const FLAG_TRACE = 8;

function formatError(message: string): LetheError {
  return new LetheError('E_FORMAT', message, 'bytes');
}

/**
 * Writes a cache state in format version {@link CACHE_FORMAT_VERSION}:
 *
 * ```
 * header   "LKVC" | u32 version | u32 payloadLength | u32 crc32(payload)
 * payload  u32 layers kvHeads headDim pageSize queryHeads sinks window queryWindow flags peakTotal
 *          per layer: u32 length, i32[length] positions, i32 lastQueryPosition,
 *                     u32 evictionRounds, u32 peakLive,
 *                     [trace] per head i32[length] evictedAt,
 *                     [queryWindow > 0] u32 n, i32[n] positions, f32[n * queryHeads * headDim],
 *                     per head: u32 live, f32[live * headDim] keys, [f32[live * headDim] values],
 *                               [f32[live] gates], i32[live] positions, i32[live] createdAt,
 *                               [f64[live] attention, i32[live] attentionCounts]
 * ```
 * All numbers little-endian.
 */
export function encodeCacheState(state: CacheState): Uint8Array {
  requireLittleEndianHost();
  const { options, layers, accounting } = state;
  const { geometry } = options;
  const out = new ByteWriter();
  out.bytes(CACHE_FORMAT_MAGIC);
  out.u32(CACHE_FORMAT_VERSION);
  out.u32(0); // payload length, patched below
  out.u32(0); // checksum, patched below
  for (const value of [
    geometry.layers,
    geometry.kvHeads,
    geometry.headDim,
    geometry.pageSize,
    options.queryHeads,
    options.anchors.sinks,
    options.anchors.window,
    options.queryWindow,
  ]) {
    out.u32(value);
  }
  out.u32(
    (options.storeValues ? FLAG_VALUES : 0) |
      (options.storeGates ? FLAG_GATES : 0) |
      (options.trackAttention ? FLAG_ATTENTION : 0) |
      (options.trace ? FLAG_TRACE : 0),
  );
  out.u32(accounting.peakTotal);
  layers.forEach((layer, l) => {
    out.u32(layer.length);
    out.array(layer.positionLog.view());
    out.i32(layer.lastQueryPosition);
    out.u32(accounting.evictionRounds[l]);
    out.u32(accounting.peakPerLayer[l]);
    if (layer.trace) {
      for (let h = 0; h < geometry.kvHeads; h++) out.array(layer.trace.evictedAtOf(h));
    }
    if (layer.queries) {
      const recent = layer.queries.latest(layer.queries.size);
      out.u32(recent.positions.length);
      out.array(recent.positions);
      out.array(recent.queries);
    }
    for (const store of layer.heads) {
      const columns = store.toColumns();
      out.u32(columns.positions.length);
      out.array(columns.keys);
      if (columns.values) out.array(columns.values);
      if (columns.gates) out.array(columns.gates);
      out.array(columns.positions);
      out.array(columns.createdAt);
      if (columns.attention) out.array(columns.attention);
      if (columns.attentionCounts) out.array(columns.attentionCounts);
    }
  });
  const bytes = out.finish();
  const payload = bytes.subarray(HEADER_BYTES);
  const header = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  header.setUint32(8, payload.length, true);
  header.setUint32(12, crc32(payload), true);
  return bytes;
}

function readOptions(input: ByteReader): ResolvedCacheOptions {
  const [layers, kvHeads, headDim, pageSize, queryHeads, sinks, window, queryWindow, flags] =
    Array.from({ length: 9 }, () => input.u32());
  if ((flags & ~(FLAG_VALUES | FLAG_GATES | FLAG_ATTENTION | FLAG_TRACE)) !== 0) {
    throw formatError(`unknown option flags ${flags}`);
  }
  try {
    return resolveCacheOptions({
      geometry: { layers, kvHeads, headDim, pageSize },
      queryHeads,
      anchors: { sinks, window },
      queryWindow,
      storeValues: (flags & FLAG_VALUES) !== 0,
      storeGates: (flags & FLAG_GATES) !== 0,
      trackAttention: (flags & FLAG_ATTENTION) !== 0,
      trace: (flags & FLAG_TRACE) !== 0,
    });
  } catch (error) {
    throw formatError(`invalid options: ${(error as Error).message}`);
  }
}

function requireFinite(values: Float32Array | Float64Array, what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw formatError(`${what} holds a non-finite value`);
  }
}

function requireIncreasing(values: Int32Array, min: number, what: string): void {
  let previous = min - 1;
  for (let i = 0; i < values.length; i++) {
    if (values[i] <= previous) throw formatError(`${what} are not strictly increasing from ${min}`);
    previous = values[i];
  }
}

/** Reads a count and checks it against a bound before anything is allocated from it. */
function readCount(input: ByteReader, max: number, what: string): number {
  const count = input.u32();
  if (count > max) throw formatError(`${what} ${count} exceeds ${max}`);
  return count;
}

function readHead(
  input: ByteReader,
  options: ResolvedCacheOptions,
  positionLog: Int32Array,
  what: string,
): HeadColumns {
  const { headDim } = options.geometry;
  const length = positionLog.length;
  const live = readCount(input, length, `${what} live count`);
  const columns: HeadColumns = {
    keys: input.f32Array(live * headDim),
    values: options.storeValues ? input.f32Array(live * headDim) : undefined,
    gates: options.storeGates ? input.f32Array(live) : undefined,
    positions: input.i32Array(live),
    createdAt: input.i32Array(live),
    attention: options.trackAttention ? input.f64Array(live) : undefined,
    attentionCounts: options.trackAttention ? input.i32Array(live) : undefined,
  };
  requireFinite(columns.keys, `${what} keys`);
  if (columns.values) requireFinite(columns.values, `${what} values`);
  if (columns.gates) requireFinite(columns.gates, `${what} gates`);
  requireIncreasing(columns.createdAt, 1, `${what} creation stamps`);
  for (let i = 0; i < live; i++) {
    const stamp = columns.createdAt[i];
    if (stamp > length)
      throw formatError(`${what} creation stamp ${stamp} exceeds the layer length`);
    if (columns.positions[i] !== positionLog[stamp - 1]) {
      throw formatError(`${what} entry ${i} has a position that disagrees with the position log`);
    }
  }
  if (columns.attention) {
    requireFinite(columns.attention, `${what} accumulated attention`);
    for (let i = 0; i < live; i++) {
      if (columns.attention[i] < 0 || columns.attentionCounts![i] < 0) {
        throw formatError(`${what} entry ${i} has negative attention statistics`);
      }
    }
  }
  return columns;
}

/**
 * Checks that every anchored token is live: the sinks (positions below `sinks`) and the last
 * `window` appended.
 */
function requireAnchorsLive(
  liveStamps: Uint8Array,
  positionLog: Int32Array,
  options: ResolvedCacheOptions,
  what: string,
): void {
  const length = liveStamps.length;
  const { sinks, window } = options.anchors;
  for (let j = 0; j < length; j++) {
    if ((positionLog[j] < sinks || j >= length - window) && liveStamps[j] === 0) {
      throw formatError(`${what} lost anchored token ${j}`);
    }
  }
}

/** One decoded layer with its accounting history. */
interface DecodedLayer {
  readonly state: LayerState;
  readonly evictionRounds: number;
  readonly peakLive: number;
}

function readLayer(input: ByteReader, options: ResolvedCacheOptions, l: number): DecodedLayer {
  const { kvHeads, headDim } = options.geometry;
  const length = readCount(input, input.remaining / 4, `layer ${l} length`);
  const positionLog = input.i32Array(length);
  requireIncreasing(positionLog, 0, `layer ${l} positions`);
  const lastPosition = length === 0 ? -1 : positionLog[length - 1];
  const lastQueryPosition = input.i32();
  if (lastQueryPosition < -1 || lastQueryPosition > lastPosition) {
    throw formatError(
      `layer ${l} last query position ${lastQueryPosition} is not a recorded token`,
    );
  }
  const evictionRounds = readCount(input, MAX_INT32, `layer ${l} eviction rounds`);
  const peakLive = readCount(input, MAX_INT32, `layer ${l} peak`);

  const evictedAt = options.trace
    ? Array.from({ length: kvHeads }, () => input.i32Array(length))
    : undefined;

  let queries: QueryWindow | undefined;
  if (options.queryWindow > 0) {
    const count = readCount(input, options.queryWindow, `layer ${l} query window size`);
    const positions = input.i32Array(count);
    const values = input.f32Array(count * options.queryHeads * headDim);
    requireIncreasing(positions, 0, `layer ${l} query positions`);
    if (count > 0 && positions[count - 1] !== lastQueryPosition) {
      throw formatError(`layer ${l} query window does not end at the last recorded query`);
    }
    requireFinite(values, `layer ${l} queries`);
    queries = new QueryWindow(options.queryWindow, options.queryHeads, headDim);
    queries.push(values, positions);
  }

  const layout = slotLayoutOf(options);
  const heads: HeadStore[] = [];
  for (let h = 0; h < kvHeads; h++) {
    const what = `layer ${l} head ${h}`;
    const columns = readHead(input, options, positionLog, what);
    const liveStamps = new Uint8Array(length);
    for (const stamp of columns.createdAt) liveStamps[stamp - 1] = 1;
    requireAnchorsLive(liveStamps, positionLog, options, what);
    if (evictedAt) {
      const row = evictedAt[h];
      for (let j = 0; j < length; j++) {
        const consistent =
          liveStamps[j] === 1 ? row[j] === STILL_LIVE : row[j] > j && row[j] <= length;
        if (!consistent)
          throw formatError(`${what} visibility trace disagrees with its live set at token ${j}`);
      }
    }
    heads.push(HeadStore.fromColumns(layout, columns));
  }
  const state = new LayerState(
    heads,
    GrowableInt32Array.from(positionLog),
    evictedAt ? VisibilityTrace.fromEvictedAt(evictedAt) : undefined,
    queries,
    lastQueryPosition,
  );
  return { state, evictionRounds, peakLive };
}

function decodePayload(input: ByteReader): CacheState {
  const options = readOptions(input);
  const { layers: layerCount, kvHeads } = options.geometry;
  const peakTotal = readCount(input, MAX_INT32, 'peak total');
  const decoded: DecodedLayer[] = [];
  for (let l = 0; l < layerCount; l++) decoded.push(readLayer(input, options, l));
  if (input.remaining !== 0)
    throw formatError(`${input.remaining} unexpected trailing payload bytes`);

  const layers = decoded.map((layer) => layer.state);
  const evictionRounds = Int32Array.from(decoded, (layer) => layer.evictionRounds);
  const peakPerLayer = Int32Array.from(decoded, (layer) => layer.peakLive);
  const accounting = new Accounting(layerCount, kvHeads);
  layers.forEach((layer, l) => {
    layer.heads.forEach((store, h) => {
      accounting.setLive(l, h, store.live);
    });
  });
  for (let l = 0; l < layerCount; l++) {
    if (peakPerLayer[l] < accounting.liveOfLayer(l))
      throw formatError(`layer ${l} peak is below its live count`);
  }
  if (peakTotal < accounting.liveTotal) throw formatError('peak total is below the live total');
  accounting.restoreHistory(peakPerLayer, evictionRounds, peakTotal);
  return { options, layers, accounting };
}

/**
 * Reads a cache state written by {@link encodeCacheState}. Checks magic, version, length and
 * checksum, then every structural invariant; anything wrong throws `E_FORMAT` and nothing is
 * returned (never a partial cache).
 */
export function decodeCacheState(bytes: Uint8Array): CacheState {
  if (!(bytes instanceof Uint8Array))
    throw new LetheError('E_ARG', 'must be a Uint8Array', 'bytes');
  requireLittleEndianHost();
  if (bytes.length < HEADER_BYTES)
    throw formatError(`truncated: ${bytes.length} bytes is shorter than the header`);
  for (let i = 0; i < CACHE_FORMAT_MAGIC.length; i++) {
    if (bytes[i] !== CACHE_FORMAT_MAGIC[i]) throw formatError('not a Lethe KV cache (bad magic)');
  }
  const header = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const version = header.getUint32(4, true);
  if (version !== CACHE_FORMAT_VERSION) {
    throw formatError(
      `unsupported format version ${version} (this build reads ${CACHE_FORMAT_VERSION})`,
    );
  }
  const payloadLength = header.getUint32(8, true);
  if (bytes.length !== HEADER_BYTES + payloadLength) {
    throw formatError(
      `${bytes.length < HEADER_BYTES + payloadLength ? 'truncated' : 'trailing bytes'}: header announces ${payloadLength} payload bytes, found ${bytes.length - HEADER_BYTES}`,
    );
  }
  const payload = bytes.subarray(HEADER_BYTES);
  if (crc32(payload) !== header.getUint32(12, true))
    throw formatError('checksum mismatch (corrupted data)');
  try {
    return decodePayload(new ByteReader(bytes, HEADER_BYTES, bytes.length));
  } catch (error) {
    if (error instanceof LetheError && error.code === 'E_FORMAT') throw error;
    throw formatError(`malformed payload: ${(error as Error).message}`);
  }
}
