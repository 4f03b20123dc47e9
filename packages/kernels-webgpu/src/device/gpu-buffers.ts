import { LetheError } from '@lethe/core';

/** Bytes of every live buffer this package created, by buffer. */
const live = new Map<GPUBuffer, number>();

/** Buffers and bytes this package holds on any device right now (what a leak test counts). */
export interface GpuBufferCount {
  readonly buffers: number;
  readonly bytes: number;
}

/**
 * Creates a buffer counted by {@link liveGpuBuffers}. Sizes are rounded up to a multiple of 4
 * bytes (WebGPU's rule for mapped and copied buffers). A size past the device's
 * `maxStorageBufferBindingSize` or `maxBufferSize` is refused here, synchronously, with
 * `E_CAPACITY` naming `what`; an allocation the device fails later (out of memory) is reported
 * by {@link DeviceHealth}.
 */
export function createGpuBuffer(
  device: GPUDevice,
  bytes: number,
  usage: GPUBufferUsageFlags,
  what: string,
): GPUBuffer {
  const size = Math.max(4, Math.ceil(bytes / 4) * 4);
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  if (size > limit) {
    throw new LetheError(
      'E_CAPACITY',
      `needs a ${size}-byte GPU buffer, past this device's limit of ${limit} bytes per buffer`,
      what,
    );
  }
  const buffer = device.createBuffer({ size, usage, label: what });
  live.set(buffer, size);
  return buffer;
}

/** Destroys a buffer made by {@link createGpuBuffer} (once; later calls do nothing). */
export function destroyGpuBuffer(buffer: GPUBuffer): void {
  if (!live.delete(buffer)) return;
  buffer.destroy();
}

/** The buffers this package holds (created and not yet destroyed), over all devices. */
export function liveGpuBuffers(): GpuBufferCount {
  let bytes = 0;
  for (const size of live.values()) bytes += size;
  return { buffers: live.size, bytes };
}
