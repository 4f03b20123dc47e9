import { LetheError } from '@lethe/core';

/**
 * What went wrong on a device: it was lost (driver reset, `destroy()`, the GPU process gone) or an
 * allocation failed for lack of memory. Both are reported by WebGPU asynchronously; a cache
 * records them and its next operation throws them ({@link DeviceHealth.check}), so a run never
 * goes on with a cache whose buffers are gone.
 */
export class DeviceHealth {
  private failure: LetheError | undefined;
  private readonly scopes: Promise<void>[] = [];

  constructor(device: GPUDevice) {
    device.lost.then((info) => {
      this.failure ??= new LetheError(
        'E_BACKEND',
        `the WebGPU device was lost (${info.reason}: ${info.message || 'no message'})`,
        'device',
      );
    });
  }

  /**
   * Runs `allocate` inside an out-of-memory error scope; a failure is recorded against `what`.
   */
  allocating<T>(device: GPUDevice, what: string, allocate: () => T): T {
    device.pushErrorScope('out-of-memory');
    let result: T;
    try {
      result = allocate();
    } finally {
      this.scopes.push(
        device.popErrorScope().then((error) => {
          if (error !== null) {
            this.failure ??= new LetheError(
              'E_CAPACITY',
              `the GPU is out of memory (${error.message})`,
              what,
            );
          }
        }),
      );
    }
    return result;
  }

  /** Throws what went wrong so far, if anything (synchronous: what has been reported). */
  check(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** Waits for every pending allocation report, then {@link DeviceHealth.check}s. */
  async settled(): Promise<void> {
    await Promise.all(this.scopes.splice(0));
    this.check();
  }
}
