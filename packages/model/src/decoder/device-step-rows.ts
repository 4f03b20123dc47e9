import { DeviceKVCache, DeviceRows, NON_FINITE } from '@lethe/kernels-webgpu';
import { LetheError, type tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import type { AppendRows } from './cache-appends';
import type { CachedStepRequest } from './cached-step';
import { tensorOfBuffer } from './device-tensor';
import type { PackedRows } from './packed-rows';

/**
 * Whether a step on device caches can keep its queries, keys and values on the device until its
 * end: nothing in it needs them on the host before a layer attends — no read selector (Quest ranks
 * pages by the query on the host), no `tokenKeep` κ < 1 read (the same), no gate hook (its
 * log-gates bias the chunk through the attention plan).
 */
export function keepsRowsOnDevice(request: CachedStepRequest): boolean {
  if (request.readSelectors?.some((selector) => selector !== undefined) === true) return false;
  if (request.keyBias !== undefined) return false;
  const ranks = request.controls?.some((perLayer) =>
    perLayer?.some((control) => control?.tokenKeep !== undefined && control.tokenKeep < 1),
  );
  return ranks !== true;
}

/**
 * Whether a device step's keys and values need never reach the host: no cache keeps a host copy
 * of its keys (`hostKeys`) and none records queries (a query window, attention tracking). Then the
 * step appends from its rows on the device and reads back only their non-finite flags.
 */
export function keysStayOnDevice(
  caches: readonly DeviceKVCache[],
  recordQueries: readonly boolean[],
): boolean {
  return caches.every((cache) => !cache.hostKeys) && !recordQueries.includes(true);
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
 * Throws what `checkAppendsFinite` throws for the step's appends when the rows' flags say a key
 * or value is not finite — sequence by sequence, layers in order, keys before values — so a step
 * whose keys stay on the device refuses them without reading them back.
 *
 * @throws LetheError `E_STATE` naming `model`.
 */
export function checkRowFlags(
  flags: Int32Array,
  layers: number,
  rows: PackedRows,
  tokens: number,
): void {
  for (let b = 0; b < rows.batch; b++) {
    for (let layer = 0; layer < layers; layer++) {
      for (const [section, kind] of [
        [1, 'keys'],
        [2, 'values'],
      ] as const) {
        for (let t = 0; t < rows.lengths[b]!; t++) {
          const bits = flags[(layer * 3 + section) * tokens + rows.starts[b]! + t]!;
          if (bits === 0) continue;
          const value =
            (bits & NON_FINITE.nan) !== 0
              ? NaN
              : (bits & NON_FINITE.positive) !== 0
                ? Infinity
                : -Infinity;
          throw new LetheError(
            'E_STATE',
            `layer ${layer} produced ${kind} with a non-finite value (${value}) for sequence ${b}: its weights or activations overflow; no cache was changed`,
            'model',
          );
        }
      }
    }
  }
}

/**
 * Appends every sequence's rows to every layer of its cache on the device, layer by layer, one
 * scatter pass per layer and page pool (`DeviceKVCache.appendRowsBatch`).
 */
export function appendRowsOnDevice(
  caches: readonly DeviceKVCache[],
  deviceRows: DeviceRows,
  rows: PackedRows,
  layers: number,
): void {
  const parts = caches.map((cache, b) => {
    const firstRow = rows.starts[b]!;
    const positions = rows.positions.subarray(firstRow, firstRow + rows.lengths[b]!);
    return { cache, firstRow, positions };
  });
  for (let layer = 0; layer < layers; layer++) {
    DeviceKVCache.appendRowsBatch(layer, deviceRows, parts);
  }
}
