export { activeBackend, type BackendName, initBackend } from './backend';
export {
  BYTES_PER_ELEMENT,
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from './dtype';
export { LetheError, type LetheErrorCode } from './errors';
export { countTensors, withLeakCheck } from './leaks';
export {
  AdamW,
  type AdamWOptions,
  type AdamWState,
  type ClippedGradients,
  clipByGlobalNorm,
  globalNorm,
} from './optim/index';
export { philox4x32 } from './philox';
export { Rng, type RngState } from './rng';
export { tf } from './tf';
export {
  assertFiniteInRange,
  assertFraction,
  assertInteger,
  assertLength,
  assertNoNaN,
} from './validate';
export { registerHeapSlices, restoreStockSlices } from './wasm-kernels/heap-slices';
export { type EnsureWebGpuOptions, ensureWebGpu, SWIFTSHADER_ICD } from './webgpu-node';
