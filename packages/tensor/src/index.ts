export {
  assertFiniteInRange,
  assertFraction,
  assertInteger,
  assertLength,
  assertNoNaN,
  BYTES_PER_ELEMENT,
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
  LetheError,
  type LetheErrorCode,
  philox4x32,
  type RngState,
} from '@lethe/core';
export { activeBackend, type BackendName, initBackend } from './backend';
export { countTensors, withLeakCheck } from './leaks';
export { isRecordingGradients, tensorMemoryHeadroom, WASM_HEAP_MAX_BYTES } from './memory';
export {
  AdamW,
  type AdamWOptions,
  type AdamWState,
  type ClippedGradients,
  clipByGlobalNorm,
  globalNorm,
} from './optim/index';
export { Rng } from './rng';
export { tf } from './tf';
export { registerHeapSlices, restoreStockSlices } from './wasm-kernels/heap-slices';
export { type EnsureWebGpuOptions, ensureWebGpu, SWIFTSHADER_ICD } from './webgpu-node';
