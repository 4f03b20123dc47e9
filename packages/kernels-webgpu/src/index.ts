/// <reference types="@webgpu/types" />
export { DeviceRows, type DeviceRowsShape } from './attend/device-rows';
export {
  type DeviceAttentionPart,
  type DeviceAttentionRequest,
  type DeviceChunk,
  DeviceKVCache,
  type DeviceKVCacheOptions,
  type DeviceRowsPart,
  type DeviceRowsRequest,
} from './cache/device-kv-cache';
export { attentionWorkgroupBytes, checkKernelGeometry } from './cache/kernel-geometry';
export { type DeviceCounters, deviceCounters } from './device/counters';
export {
  createGpuBuffer,
  destroyGpuBuffer,
  type GpuBufferCount,
  liveGpuBuffers,
} from './device/gpu-buffers';
export { readBack } from './device/read-back';
export { NON_FINITE } from './kernels/rope-rows-wgsl';
