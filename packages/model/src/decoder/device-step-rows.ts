import { DeviceRows } from '@lethe/kernels-webgpu';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import type { AppendRows } from './cache-appends';
import type { CachedStepRequest } from './cached-step';
import { ropeRotation } from './host-rope';
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

/** The step's rows on tfjs's WebGPU device, their rotary angles uploaded (the host's). */
export function deviceStepRows(
  device: GPUDevice,
  config: ModelConfig,
  rows: PackedRows,
  inverseFrequencies: Float32Array,
): DeviceRows {
  return new DeviceRows(
    device,
    {
      layers: config.num_hidden_layers,
      queryHeads: config.num_attention_heads,
      kvHeads: config.num_key_value_heads,
      headDim: config.head_dim,
    },
    ropeRotation(rows.positions, inverseFrequencies),
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
  return tf.tensor({ buffer: rows.buffer }, [rows.buffer.size / 4], 'float32');
}
