import { countDownload } from './counters';
import { createGpuBuffer, destroyGpuBuffer } from './gpu-buffers';
import { MAP_MODE_READ, Usage } from './usage';

/**
 * Copies the first `bytes` bytes of `source` to the host: a staging buffer, one copy, one
 * submit, `mapAsync`. The source needs `COPY_SRC` usage.
 */
export async function readBack(
  device: GPUDevice,
  source: GPUBuffer,
  bytes: number,
): Promise<ArrayBuffer> {
  const staging = createGpuBuffer(
    device,
    bytes,
    Usage.MAP_READ | Usage.COPY_DST,
    'read-back staging',
  );
  try {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, staging, 0, staging.size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MAP_MODE_READ);
    countDownload(bytes);
    return staging.getMappedRange().slice(0, bytes);
  } finally {
    destroyGpuBuffer(staging);
  }
}
