import { DeviceKVCache, DeviceRows } from '@lethe/kernels-webgpu';
import type { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import type { AppendRows } from './cache-appends';
import type { CachedStepRequest } from './cached-step';
import { ranksPages } from './device-ranking';
import { tensorOfBuffer } from './device-tensor';
import type { PackedRows } from './packed-rows';

/**
 * Whether a step on device caches can keep its queries, keys and values on the device until its
 * end: nothing in it needs them on the host before a layer attends — no gate hook (its log-gates
 * bias the chunk through the attention plan), and no sequence ranking pages on the host (a read
 * selector or a `tokenKeep` κ < 1 read of a sequence whose cache does not rank them itself,
 * `deviceRanks`, or a selector without `pageRanking`).
 */
export function keepsRowsOnDevice(
  request: CachedStepRequest,
  deviceRanks: readonly boolean[],
): boolean {
  if (request.keyBias !== undefined) return false;
  return request.caches.every((_, b) => {
    const selector = request.readSelectors?.[b];
    if (selector !== undefined && typeof selector.pageRanking !== 'function') return false;
    return deviceRanks[b] === true || !ranksPages(request, b);
  });
}

/**
 * Whether a device step's keys, values and queries need never reach the host: no cache keeps a
 * host copy of its keys (`hostKeys`) and none keeps a query window (the window's queries live on
 * the host; attention tracking alone — H2O's — accumulates from the rows on the device). Then the
 * step appends and records from its rows on the device and reads back only their flags.
 */
export function keysStayOnDevice(caches: readonly DeviceKVCache[]): boolean {
  return caches.every((cache) => !cache.hostKeys && cache.queryWindow === 0);
}

/** The step's rows on tfjs's WebGPU device, their rotary angles (`ropeRotation`) uploaded. */
export function deviceStepRows(
  device: GPUDevice,
  config: ModelConfig,
  rotation: Float32Array,
): DeviceRows {
  return new DeviceRows(
    device,
    {
      layers: config.num_hidden_layers,
      queryHeads: config.num_attention_heads,
      kvHeads: config.num_key_value_heads,
      headDim: config.head_dim,
    },
    rotation,
  );
}

/**
 * Fills `layer`'s rows from its q/k/v projection `[(Hq + 2·Hkv)·hd, N]` (a tensor on tfjs's
 * WebGPU backend): its buffer goes to the RoPE-rows pass through `dataToGPU()` (a device copy)
 * and is released once the pass is submitted.
 */
export function rotateOnDevice(rows: DeviceRows, layer: number, projection: tf.Tensor): void {
  const data = projection.dataToGPU();
  try {
    rows.rotate(layer, data.buffer!);
  } finally {
    data.tensorRef.dispose();
  }
}

/**
 * The host copy of a step's device rows (`[layers, …]`, read once at the end of the step) as the
 * per-layer rows the caches' appends take.
 */
export function rowsToAppends(
  host: Float32Array,
  config: ModelConfig,
  rows: DeviceRows,
): AppendRows[] {
  const {
    num_hidden_layers: layers,
    num_attention_heads: queryHeads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
  } = config;
  const querySize = rows.tokens * queryHeads * headDim;
  const kvSize = rows.tokens * kvHeads * headDim;
  return Array.from({ length: layers }, (_, l) => {
    const at = l * rows.floatsPerLayer;
    return {
      queries: host.subarray(at, at + querySize),
      keys: host.subarray(at + querySize, at + querySize + kvSize),
      values: host.subarray(at + querySize + kvSize, at + querySize + 2 * kvSize),
      gates: undefined,
    };
  });
}

/** The rows' buffer as a tensor to read (tfjs copies it into a buffer of its own). */
export function rowsTensor(rows: DeviceRows): tf.Tensor {
  return tensorOfBuffer(rows.buffer, [rows.buffer.size / 4], 'float32');
}

/** The rows' non-finite flags as a tensor to read, `[layers·3·tokens]` int32 (a copy). */
export function flagsTensor(rows: DeviceRows): tf.Tensor {
  return tensorOfBuffer(rows.flags, [rows.flags.size / 4], 'int32');
}

/**
 * Appends every sequence's rows to every layer of its cache on the device, layer by layer, one
 * scatter pass per layer and page pool (`DeviceKVCache.appendRowsBatch`), then records the queries
 * of the caches `recordQueries` flags from the rows (`recordQueriesFromRows`: H2O's accumulation
 * on the device), as the host appends and records cache by cache.
 */
export function appendRowsOnDevice(
  caches: readonly DeviceKVCache[],
  deviceRows: DeviceRows,
  rows: PackedRows,
  layers: number,
  recordQueries: readonly boolean[],
): void {
  const parts = caches.map((cache, b) => {
    const firstRow = rows.starts[b]!;
    const positions = rows.positions.subarray(firstRow, firstRow + rows.lengths[b]!);
    return { cache, firstRow, positions };
  });
  for (let layer = 0; layer < layers; layer++) {
    DeviceKVCache.appendRowsBatch(layer, deviceRows, parts);
    parts.forEach(({ cache, firstRow, positions }, b) => {
      if (recordQueries[b] === true) {
        cache.recordQueriesFromRows(layer, deviceRows, firstRow, positions);
      }
    });
  }
}
