import { countDownload } from './counters';
import { createGpuBuffer, destroyGpuBuffer } from './gpu-buffers';
import { MAP_MODE_READ, Usage } from './usage';

/** A part of a device buffer to read: its first `bytes` bytes (a multiple of 4). */
export interface ReadPart {
  readonly buffer: GPUBuffer;
  readonly bytes: number;
}

/**
 * Copies the first `bytes` bytes of `source` to the host: a staging buffer, one copy, one
 * submit, `mapAsync`. The source needs `COPY_SRC` usage.
 */
export async function readBack(
  device: GPUDevice,
  source: GPUBuffer,
  bytes: number,
): Promise<ArrayBuffer> {
  const [bytesRead] = await readBackParts(device, [{ buffer: source, bytes }]);
  return bytesRead!;
}

/**
 * Copies several buffers' leading bytes to the host through one staging buffer (one submit, one
 * `mapAsync`), in order after everything submitted before. Sources need `COPY_SRC` usage.
 */
export async function readBackParts(
  device: GPUDevice,
  parts: readonly ReadPart[],
): Promise<ArrayBuffer[]> {
  const total = parts.reduce((sum, part) => sum + part.bytes, 0);
  const staging = createGpuBuffer(
    device,
    Math.max(total, 4),
    Usage.MAP_READ | Usage.COPY_DST,
    'read-back staging',
  );
  try {
    const encoder = device.createCommandEncoder();
    let offset = 0;
    for (const part of parts) {
      if (part.bytes > 0) encoder.copyBufferToBuffer(part.buffer, 0, staging, offset, part.bytes);
      offset += part.bytes;
    }
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MAP_MODE_READ);
    countDownload(total);
    const mapped = staging.getMappedRange();
    offset = 0;
    return parts.map((part) => {
      const copy = mapped.slice(offset, offset + part.bytes);
      offset += part.bytes;
      return copy;
    });
  } finally {
    destroyGpuBuffer(staging);
  }
}
