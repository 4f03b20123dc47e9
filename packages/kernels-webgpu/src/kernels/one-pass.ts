import { countDispatches } from '../device/counters';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { type WordArray, writeArray } from '../device/write-array';
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

/** Words a pass binds that the host writes for it: its parameters (uniform) or a list. */
export interface PassUpload {
  readonly data: WordArray;
  readonly label: string;
  readonly uniform?: boolean;
}

/**
 * {@link submitOnePass} of a pass whose first bindings are written from the host: each of
 * `uploads` in a buffer of its own (bound in order from 0, destroyed once submitted), then
 * `buffers`.
 */
export function submitUploadedPass(
  device: GPUDevice,
  label: string,
  source: string,
  uploads: readonly PassUpload[],
  buffers: readonly GPUBuffer[],
  workgroups: number,
): void {
  const made: GPUBuffer[] = [];
  try {
    for (const upload of uploads) {
      const usage = (upload.uniform === true ? Usage.UNIFORM : Usage.STORAGE) | Usage.COPY_DST;
      const buffer = createGpuBuffer(device, upload.data.byteLength, usage, upload.label);
      made.push(buffer);
      writeArray(device, buffer, 0, upload.data);
    }
    submitOnePass(device, label, source, [...made, ...buffers], workgroups);
  } finally {
    for (const buffer of made) destroyGpuBuffer(buffer);
  }
}
