import { countDispatches } from '../device/counters';
import { computePipeline } from '../kernels/pipelines';
import { queryAttentionSource } from '../kernels/query-attention-wgsl';
import { bound, type LayerPass, type PassBuffers } from './layer-pass';

/** Queries already on the device: `[n, queryHeads, headDim]` from float `offset` of `buffer`. */
export interface DeviceQueries {
  readonly buffer: GPUBuffer;
  /** A multiple of 4. */
  readonly offset: number;
}

/** The queries one observation pass scores, and the layer's live counts at the time. */
export interface ObservedQueries {
  /** `[n, queryHeads, headDim]` queries after RoPE, uploaded for the pass or on the device. */
  readonly queries: Float32Array | DeviceQueries;
  /** `[n]` their positions. */
  readonly positions: Int32Array;
  /** `[kvHeads]` live entries per KV head. */
  readonly live: Int32Array;
  /** Row stride of the output (≥ every live count). */
  readonly rowStride: number;
}

/**
 * Encodes the pass writing the attention probabilities of `n` queries over the live entries of
 * their KV heads (no bias, causal: see `queryAttentionSource`) into a new `[n, queryHeads,
 * rowStride]` buffer of `buffers`; also returns the `[live…, positions…]` buffer the pass read.
 */
export function encodeQueryAttention(
  pass: LayerPass,
  encoder: GPUComputePassEncoder,
  buffers: PassBuffers,
  observed: ObservedQueries,
): { probabilities: GPUBuffer; info: GPUBuffer } {
  const { device, geometry, queryHeads, pool } = pass;
  const { kvHeads, headDim, pageSize } = geometry;
  const n = observed.positions.length;
  const params = new Uint32Array(8);
  params.set([queryHeads, kvHeads, pageSize, pass.tableStride, observed.rowStride]);
  new Float32Array(params.buffer)[5] = Math.fround(1 / Math.sqrt(headDim));
  params[6] = pass.tableBase;
  const { queries } = observed;
  params[7] = queries instanceof Float32Array ? 0 : queries.offset / 4;
  const info = new Int32Array(kvHeads + n);
  info.set(observed.live);
  info.set(observed.positions, kvHeads);
  const infoBuffer = buffers.input(info, 'observed queries');
  const probabilities = buffers.scratch(
    4 * n * queryHeads * observed.rowStride,
    'observed attention',
  );
  const pipeline = computePipeline(
    device,
    'query attention',
    queryAttentionSource(queryHeads / kvHeads, headDim / 4),
  );
  encoder.setPipeline(pipeline);
  encoder.setBindGroup(
    0,
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        bound(0, buffers.input(params, 'query attention parameters', true)),
        bound(
          1,
          queries instanceof Float32Array
            ? buffers.input(queries, 'observed query vectors')
            : queries.buffer,
        ),
        bound(2, infoBuffer),
        bound(3, pool.table),
        bound(4, pool.keys),
        bound(5, pool.positions),
        bound(6, probabilities),
      ],
    }),
  );
  encoder.dispatchWorkgroups(queryHeads, n);
  countDispatches(1);
  return { probabilities, info: infoBuffer };
}
