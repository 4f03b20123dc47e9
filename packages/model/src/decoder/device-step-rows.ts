import { DeviceKVCache, DeviceRows } from '@lethe/kernels-webgpu';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import type { AppendRows } from './cache-appends';
import type { CachedStepRequest } from './cached-step';
import { ranksPages } from './device-ranking';
import { tensorOfBuffer } from './device-tensor';
import type { PackedRows } from './packed-rows';

/**
 * Whether a step on device caches can keep its queries, keys and values on the device until its
 * end: nothing in it needs them on the host before a layer attends — no sequence ranking pages on
 * the host (a read selector or a `tokenKeep` κ < 1 read of a sequence whose cache does not rank
 * them itself, `deviceRanks`, or a selector without `pageRanking`). A gate hook's gates join the
 * rows ({@link writeGatesOnDevice}).
 */
export function keepsRowsOnDevice(
  request: CachedStepRequest,
  deviceRanks: readonly boolean[],
): boolean {
  return request.caches.every((_, b) => {
    const selector = request.readSelectors?.[b];
    if (selector !== undefined && typeof selector.pageRanking !== 'function') return false;
    return deviceRanks[b] === true || !ranksPages(request, b);
  });
}

/**
 * Whether a device step's keys, values and queries need never reach the host: no cache keeps a
 * host copy of its keys (`hostKeys`, which also keeps a query window's queries on the host). Then
 * the step appends and records from its rows on the device — a query window's queries copied
 * into its ring there, H2O's attention accumulated there — and reads back only their flags.
 */
export function keysStayOnDevice(caches: readonly DeviceKVCache[]): boolean {
  return caches.every((cache) => !cache.hostKeys);
}

/**
 * The step's rows on tfjs's WebGPU device, their rotary angles (`ropeRotation`) uploaded; with a
 * section for a gate hook's gates when `gated`.
 */
export function deviceStepRows(
  device: GPUDevice,
  config: ModelConfig,
  rotation: Float32Array,
  gated: boolean,
): DeviceRows {
  return new DeviceRows(
    device,
    {
      layers: config.num_hidden_layers,
      queryHeads: config.num_attention_heads,
      kvHeads: config.num_key_value_heads,
      headDim: config.head_dim,
      gated,
    },
    rotation,
  );
}

/** `[N]` the slot of each packed row in the right-padded `[B·width]` layout (once per step). */
export function paddedSlots(rows: PackedRows): tf.Tensor1D {
  const slots = new Int32Array(rows.count);
  for (let b = 0; b < rows.batch; b++) {
    for (let t = 0; t < rows.lengths[b]!; t++) slots[rows.starts[b]! + t] = b * rows.width + t;
  }
  return tf.tensor1d(slots, 'int32');
}

/**
 * A gate hook's log-gates and gates, `[B, Hkv, width]` right-padded each (`gateTensors`), as the
 * `[2·N, Hkv]` rows `DeviceRows.writeGates` takes: the log-gates of the step's packed rows
 * (gathered at `index`, {@link paddedSlots}), then their gates — the numbers the host unpads.
 */
export function packedGates(padded: readonly tf.Tensor[], index: tf.Tensor1D): tf.Tensor {
  const unpad = (gates: tf.Tensor) => {
    const [batch, kvHeads, width] = gates.shape as [number, number, number];
    const bySlot = tf.reshape(tf.transpose(gates, [0, 2, 1]), [batch * width, kvHeads]);
    return tf.gather(bySlot, index);
  };
  return tf.concat(padded.map(unpad), 0);
}

/** Writes `layer`'s gates (`packedGates`) into the step's rows, the tensor's buffer released after. */
export function writeGatesOnDevice(rows: DeviceRows, layer: number, gates: tf.Tensor): void {
  const data = gates.dataToGPU();
  try {
    rows.writeGates(layer, data.buffer!);
  } finally {
    data.tensorRef.dispose();
  }
}

/**
 * The gates `[N, Hkv]` a step's rows reported for each layer (`DeviceRows.writeGates`), from the
 * host copy of their flags.
 */
export function reportedGates(flags: Int32Array, rows: DeviceRows): Float32Array[] {
  const floats = new Float32Array(flags.buffer, flags.byteOffset, flags.length);
  const size = rows.tokens * rows.shape.kvHeads;
  return Array.from({ length: rows.shape.layers }, (_, l) => {
    const at = rows.gateSlot(l, 0, 0);
    return floats.slice(at, at + size);
  });
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
 * per-layer rows the caches' appends take, with each layer's reported gates (`reportedGates`) if any.
 */
export function rowsToAppends(
  host: Float32Array,
  config: ModelConfig,
  rows: DeviceRows,
  gates: readonly Float32Array[] | undefined,
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
      gates: gates?.[l],
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
 * scatter pass per layer and page pool (`DeviceKVCache.appendRowsBatch`; a cache that stores
 * gates with the layer's reported `gates`), then records the queries
 * of the caches `recordQueries` flags from the rows (`recordQueriesFromRows`: a query window's
 * ring and H2O's accumulation on the device), as the host appends and records cache by cache.
 */
export function appendRowsOnDevice(
  caches: readonly DeviceKVCache[],
  deviceRows: DeviceRows,
  rows: PackedRows,
  layers: number,
  recordQueries: readonly boolean[],
  gates: readonly Float32Array[] | undefined,
): void {
  const kvHeads = deviceRows.shape.kvHeads;
  const partsOf = (layer: number) =>
    caches.map((cache, b) => {
      const firstRow = rows.starts[b]!;
      const end = firstRow + rows.lengths[b]!;
      const positions = rows.positions.subarray(firstRow, end);
      const own = cache.storeGates
        ? gates?.[layer]?.subarray(firstRow * kvHeads, end * kvHeads)
        : undefined;
      return { cache, firstRow, positions, ...(own === undefined ? {} : { gates: own }) };
    });
  for (let layer = 0; layer < layers; layer++) {
    const parts = partsOf(layer);
    DeviceKVCache.appendRowsBatch(layer, deviceRows, parts);
    parts.forEach(({ cache, firstRow, positions }, b) => {
      if (recordQueries[b] === true) {
        cache.recordQueriesFromRows(layer, deviceRows, firstRow, positions);
      }
    });
  }
}
