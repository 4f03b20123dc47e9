/** Compiled pipelines per device and source: a shader is compiled once per device. */
const cache = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** The compute pipeline of WGSL `source` (entry point `main`, automatic layout) on `device`. */
export function computePipeline(
  device: GPUDevice,
  label: string,
  source: string,
): GPUComputePipeline {
  let pipelines = cache.get(device);
  if (pipelines === undefined) {
    pipelines = new Map();
    cache.set(device, pipelines);
  }
  let pipeline = pipelines.get(source);
  if (pipeline === undefined) {
    const module = device.createShaderModule({ code: source, label });
    pipeline = device.createComputePipeline({
      label,
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
    });
    pipelines.set(source, pipeline);
  }
  return pipeline;
}
