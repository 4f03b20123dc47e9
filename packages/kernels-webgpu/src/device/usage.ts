/**
 * WebGPU's buffer usage and map-mode bits, as the specification fixes them. The `GPUBufferUsage`
 * and `GPUMapMode` globals exist only once a WebGPU implementation is loaded (in Node: after
 * Dawn is), so the package uses these to import anywhere.
 */
export const Usage = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
} as const;

/** `GPUMapMode.READ`. */
export const MAP_MODE_READ = 0x0001;
