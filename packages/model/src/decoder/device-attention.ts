import { DeviceKVCache, destroyGpuBuffer } from '@lethe/kernels-webgpu';
import type { KVCacheStore } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkAttentionBias } from './attention-bias';
import type { LayerReads } from './layer-attention';

/**
 * The batch's caches when every one is a `DeviceKVCache` on the WebGPU device of tfjs's current
 * backend (then attention runs on the device, next to the rest of the step); otherwise
 * undefined, and attention runs on the host (a device cache answers the host reads too).
 */
export function deviceCaches(
  caches: readonly KVCacheStore[],
): readonly DeviceKVCache[] | undefined {
  const device = (tf.backend() as unknown as { device?: GPUDevice }).device;
  if (device === undefined || caches.length === 0) return undefined;
  const onDevice = caches.every(
    (cache) => cache instanceof DeviceKVCache && cache.device === device,
  );
  return onDevice ? (caches as readonly DeviceKVCache[]) : undefined;
}

/**
 * The attention output of one layer, `[N, Hq·hd]` rows on the device: per sequence, the paged
 * attention kernel of its `DeviceKVCache` over what its read plan reads and, causally, its
 * chunk (what {@link attendLayer} computes on the host). The kernel's output buffer becomes a
 * tfjs tensor (tfjs copies it into its own buffer and submits), so nothing is read back.
 */
export function attendLayerOnDevice(
  config: ModelConfig,
  layer: number,
  reads: LayerReads,
  caches: readonly DeviceKVCache[],
): tf.Tensor2D {
  const { rows, planned, controls, queries, keys, values, logGates } = reads;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  const querySize = queryHeads * headDim;
  const kvSize = kvHeads * headDim;
  const parts: tf.Tensor2D[] = [];
  let done = false;
  try {
    planned.forEach((read, b) => {
      const tokens = rows.lengths[b]!;
      if (tokens === 0) return;
      const first = rows.starts[b]!;
      const bias = controls?.[b]?.attentionBias;
      if (bias !== undefined) {
        checkAttentionBias(bias, kvHeads, Math.max(0, ...read.live), `controls[${b}][${layer}]`);
      }
      const output = caches[b]!.attend(layer, {
        queries: queries.subarray(first * querySize, (first + tokens) * querySize),
        queryPositions: rows.positions.subarray(first, first + tokens),
        ranges: read.ranges,
        ...(bias === undefined ? {} : { liveBias: bias }),
        chunk: {
          keys: keys.subarray(first * kvSize, (first + tokens) * kvSize),
          values: values.subarray(first * kvSize, (first + tokens) * kvSize),
          ...(logGates === undefined
            ? {}
            : { bias: logGates.subarray(first * kvHeads, (first + tokens) * kvHeads) }),
        },
      });
      try {
        parts.push(tf.tensor({ buffer: output }, [tokens, querySize], 'float32') as tf.Tensor2D);
      } finally {
        destroyGpuBuffer(output);
      }
    });
    const output = parts.length === 1 ? parts[0]! : tf.concat(parts, 0);
    done = true;
    return output;
  } finally {
    if (!done || parts.length > 1) tf.dispose(parts);
  }
}
