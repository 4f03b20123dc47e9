import { countDispatches } from '../device/counters';
import { packEntriesSource } from '../kernels/pack-entries-wgsl';
import { computePipeline } from '../kernels/pipelines';
import { workgroupGrid } from '../kernels/workgroup-grid';
import { bound, type LayerPass, type PassBuffers } from './layer-pass';

/**
 * Encodes the pass packing one per-entry field of the pool (`width` words per entry) into a new
 * `[kvHeads, rowStride, width]` buffer of `buffers`, live entries in order, zeros past each
 * head's live count (see `packEntriesSource`).
 */
export function encodePackEntries(
  pass: LayerPass,
  encoder: GPUComputePassEncoder,
  buffers: PassBuffers,
  field: GPUBuffer,
  live: Int32Array,
  rowStride: number,
  width = 1,
): GPUBuffer {
  const { device, geometry } = pass;
  const { kvHeads, pageSize } = geometry;
  const words = kvHeads * rowStride * width;
  const out = buffers.scratch(4 * words, 'packed entries');
  const pipeline = computePipeline(device, 'pack entries', packEntriesSource());
  encoder.setPipeline(pipeline);
  encoder.setBindGroup(
    0,
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        bound(
          0,
          buffers.input(
            Uint32Array.of(kvHeads, pageSize, pass.tableStride, rowStride, width, pass.tableBase),
            'pack parameters',
            true,
          ),
        ),
        bound(1, buffers.input(Uint32Array.from(live), 'live counts')),
        bound(2, pass.pool.table),
        bound(3, field),
        bound(4, out),
      ],
    }),
  );
  const [x, y] = workgroupGrid(device, Math.ceil(words / 64));
  encoder.dispatchWorkgroups(x, y);
  countDispatches(1);
  return out;
}
