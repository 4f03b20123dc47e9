import { countDispatches } from '../device/counters';
import { accumulateAttentionSource } from '../kernels/accumulate-attention-wgsl';
import { computePipeline } from '../kernels/pipelines';
import { workgroupGrid } from '../kernels/workgroup-grid';
import { bound, type LayerPass, PassBuffers } from './layer-pass';
import { encodeQueryAttention, type ObservedQueries } from './query-attention';

/** Query tokens folded in per submission (bounds the probabilities' scratch buffer). */
const TOKENS_PER_PASS = 64;

/**
 * Adds the attention of new queries to every live entry they see, on the device (what
 * `KVCache.recordQueries` does with `trackAttention`): per group of up to 64 query tokens, the
 * query-attention pass, then the accumulation pass into the pool's sums, in one submission.
 * The queries are uploaded, or read where a step's rows hold them. Nothing is read back.
 */
export function accumulateAttention(pass: LayerPass, observed: ObservedQueries): void {
  const { device, geometry, queryHeads, pool } = pass;
  const { kvHeads, headDim, pageSize } = geometry;
  if (pool.attention === undefined || pool.counts === undefined) return;
  const vector = queryHeads * headDim;
  const tokens = observed.positions.length;
  const pipeline = computePipeline(
    device,
    'accumulate attention',
    accumulateAttentionSource(queryHeads / kvHeads),
  );
  for (let first = 0; first < tokens; first += TOKENS_PER_PASS) {
    const last = Math.min(tokens, first + TOKENS_PER_PASS);
    const buffers = new PassBuffers(device);
    try {
      const encoder = device.createCommandEncoder({ label: 'accumulate attention' });
      const compute = encoder.beginComputePass();
      const { queries } = observed;
      const { probabilities, info } = encodeQueryAttention(pass, compute, buffers, {
        ...observed,
        queries:
          queries instanceof Float32Array
            ? queries.subarray(first * vector, last * vector)
            : { buffer: queries.buffer, offset: queries.offset + first * vector },
        positions: observed.positions.subarray(first, last),
      });
      const params = Uint32Array.of(
        last - first,
        queryHeads,
        kvHeads,
        pageSize,
        pass.tableStride,
        observed.rowStride,
        pass.tableBase,
      );
      compute.setPipeline(pipeline);
      compute.setBindGroup(
        0,
        device.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: [
            bound(0, buffers.input(params, 'accumulation parameters', true)),
            bound(1, info),
            bound(2, pool.table),
            bound(3, pool.positions),
            bound(4, probabilities),
            bound(5, pool.attention),
            bound(6, pool.counts),
          ],
        }),
      );
      const [x, y] = workgroupGrid(device, Math.ceil((kvHeads * observed.rowStride) / 64));
      compute.dispatchWorkgroups(x, y);
      compute.end();
      device.queue.submit([encoder.finish()]);
      countDispatches(1);
    } finally {
      buffers.destroy();
    }
  }
}
