import { countDispatches } from '../device/counters';
import { computePipeline } from './pipelines';
import { workgroupGrid } from './workgroup-grid';

/**
 * Records and submits one compute pass of the WGSL `source` (entry point `main`, workgroups of
 * 64 threads indexed `id.x + id.y·groups.x·64`): `buffers[i]` bound at binding `i` of group 0,
 * `workgroups` workgroups laid out within the device's per-dimension limit. Counted as one
 * dispatch.
 */
export function submitOnePass(
  device: GPUDevice,
  label: string,
  source: string,
  buffers: readonly GPUBuffer[],
  workgroups: number,
): void {
  const pipeline = computePipeline(device, label, source);
  const encoder = device.createCommandEncoder({ label });
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(
    0,
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    }),
  );
  const [x, y] = workgroupGrid(device, workgroups);
  pass.dispatchWorkgroups(x, y);
  pass.end();
  device.queue.submit([encoder.finish()]);
  countDispatches(1);
}
