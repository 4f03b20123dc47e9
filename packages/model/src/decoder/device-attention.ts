import { LetheError } from '@lethe/core';
import {
  type DeviceAttentionPart,
  type DeviceAttentionRequest,
  DeviceKVCache,
  type DeviceRows,
  type DeviceRowsPart,
  destroyGpuBuffer,
} from '@lethe/kernels-webgpu';
import type { KVCacheStore } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkAttentionBias } from './attention-bias';
import { tensorOfBuffer } from './device-tensor';
import type { LayerReads } from './layer-attention';

/**
 * What a layer's attention reads when the step's queries, keys and values stayed on the device
 * (`rows`, written by the RoPE-rows pass): {@link LayerReads} without the host rows.
 */
export interface DeviceLayerReads
  extends Omit<LayerReads, 'queries' | 'keys' | 'values' | 'logGates'> {
  readonly deviceRows: DeviceRows;
}

/** One sequence's part of a launch, by its index in the batch. */
type IndexedPart = { readonly index: number; readonly part: DeviceAttentionPart | DeviceRowsPart };

/**
 * The batch's caches when every one is a `DeviceKVCache` on the WebGPU device of tfjs's current
 * backend (then attention runs on the device, next to the rest of the step); otherwise
 * undefined, and attention runs on the host (a device cache with `hostKeys` answers the host
 * reads too).
 *
 * @throws LetheError `E_ARG` naming `caches[b]` for a device cache without `hostKeys` in a batch
 *   that attends on the host (mixed with other caches, or off tfjs's device).
 */
export function deviceCaches(
  caches: readonly KVCacheStore[],
): readonly DeviceKVCache[] | undefined {
  const device = (tf.backend() as unknown as { device?: GPUDevice }).device;
  const onDevice =
    device !== undefined &&
    caches.length > 0 &&
    caches.every((cache) => cache instanceof DeviceKVCache && cache.device === device);
  if (onDevice) return caches as readonly DeviceKVCache[];
  const keysOnDevice = caches.findIndex(
    (cache) => cache instanceof DeviceKVCache && !cache.hostKeys,
  );
  if (keysOnDevice >= 0) {
    throw new LetheError(
      'E_ARG',
      "keeps its keys on its device only, and this batch attends on the host (it mixes caches, or is not on tfjs's device): batch it with device caches only, or create it with hostKeys: true",
      `caches[${keysOnDevice}]`,
    );
  }
  return undefined;
}

/**
 * The attention output of one layer, `[N, Hq·hd]` rows on the device: the paged attention kernel
 * over each sequence's `DeviceKVCache` — what its read plan reads and, causally, its chunk (what
 * {@link attendLayer} computes on the host) — one launch for all the sequences whose caches share
 * a page pool (every cache of one shape: the usual batch), one per pool otherwise. The queries
 * and chunks are the host's rows, uploaded, or the step's rows already on the device. The
 * kernel's output buffer becomes a tfjs tensor (tfjs copies it into its own buffer), so nothing is
 * read back. A sequence whose plan ranks pages (`SequenceRead.ranking`) has the launch rank
 * them; from host rows, each writes its read counts where `readCounts(b)` says.
 */
export function attendLayerOnDevice(
  config: ModelConfig,
  layer: number,
  reads: LayerReads | DeviceLayerReads,
  caches: readonly DeviceKVCache[],
  readCounts?: (b: number) => { readonly buffer: GPUBuffer; readonly offset: number },
): tf.Tensor2D {
  const { rows, planned, controls } = reads;
  const deviceRows = 'deviceRows' in reads ? reads.deviceRows : undefined;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  const querySize = queryHeads * headDim;
  const kvSize = kvHeads * headDim;
  const parts = new Map<object, IndexedPart[]>();
  planned.forEach((read, b) => {
    const tokens = rows.lengths[b]!;
    if (tokens === 0) return;
    const first = rows.starts[b]!;
    const bias = controls?.[b]?.attentionBias;
    if (bias !== undefined) {
      checkAttentionBias(bias, kvHeads, Math.max(0, ...read.live), `controls[${b}][${layer}]`);
    }
    const cache = caches[b]!;
    const queryPositions = rows.positions.subarray(first, first + tokens);
    const liveBias = bias === undefined ? {} : { liveBias: bias };
    const ranking = read.ranking === undefined ? {} : { ranking: read.ranking };
    let part: DeviceAttentionPart | DeviceRowsPart;
    if (deviceRows !== undefined) {
      part = {
        cache,
        request: { queryPositions, firstRow: first, ranges: read.ranges, ...liveBias, ...ranking },
      };
    } else {
      const { queries, keys, values, logGates } = reads as LayerReads;
      const request: DeviceAttentionRequest = {
        queries: queries.subarray(first * querySize, (first + tokens) * querySize),
        queryPositions,
        ranges: read.ranges,
        ...liveBias,
        chunk: {
          keys: keys.subarray(first * kvSize, (first + tokens) * kvSize),
          values: values.subarray(first * kvSize, (first + tokens) * kvSize),
          ...(logGates === undefined
            ? {}
            : { bias: logGates.subarray(first * kvHeads, (first + tokens) * kvHeads) }),
        },
        ...ranking,
        ...(read.ranking === undefined || readCounts === undefined
          ? {}
          : { readCounts: readCounts(b) }),
      };
      part = { cache, request };
    }
    const pool = cache.poolOf(layer);
    const group = parts.get(pool) ?? [];
    group.push({ index: b, part });
    parts.set(pool, group);
  });
  const launches = [...parts.values()];
  const launch = (group: readonly IndexedPart[]) =>
    launchGroup(layer, group, querySize, deviceRows);
  if (launches.length === 1) return launch(launches[0]!);
  // several pools: one launch each, then the sequences' rows back in batch order
  return tf.tidy(() => {
    const bySequence = new Map<number, tf.Tensor2D>();
    for (const group of launches) {
      const output = launch(group);
      const sizes = group.map(({ index }) => rows.lengths[index]!);
      tf.split(output, sizes, 0).forEach((part, j) => {
        bySequence.set(group[j]!.index, part as tf.Tensor2D);
      });
    }
    const ordered = [...bySequence.keys()].sort((a, b) => a - b).map((b) => bySequence.get(b)!);
    return tf.concat(ordered, 0);
  });
}

/** One batched launch over `group`, its sequences' rows in order as a `[rows, querySize]` tensor. */
function launchGroup(
  layer: number,
  group: readonly IndexedPart[],
  querySize: number,
  deviceRows: DeviceRows | undefined,
): tf.Tensor2D {
  const output =
    deviceRows === undefined
      ? DeviceKVCache.attendBatch(
          layer,
          group.map(({ part }) => part as DeviceAttentionPart),
        )
      : DeviceKVCache.attendRows(
          layer,
          group.map(({ part }) => part as DeviceRowsPart),
          deviceRows,
        );
  const rowCount = group.reduce((sum, { part }) => sum + part.request.queryPositions.length, 0);
  try {
    return tensorOfBuffer(output, [rowCount, querySize], 'float32') as tf.Tensor2D;
  } finally {
    destroyGpuBuffer(output);
  }
}
