import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, expect } from 'vitest';
import { liveGpuBuffers } from '../src/index';

/**
 * Why WebGPU is unavailable here, or undefined when it is (in Node: Dawn over a Vulkan driver,
 * SwiftShader from Debian's chromium on machines without a GPU).
 */
export const unavailable = await ensureWebGpu({ required: true }).then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
);

/** In CI (CI=true) WebGPU must work: the tests run and fail with the reason; elsewhere they skip. */
export const skipWebGpu = unavailable !== undefined && !process.env.CI;
if (skipWebGpu) console.warn(`[@lethe/kernels-webgpu] WebGPU tests skipped: ${unavailable}`);

/** tfjs's WebGPU device (the one a model's tensors live on), with the backend made current. */
export async function tfjsDevice(): Promise<GPUDevice> {
  await initBackend('webgpu');
  return (tf.backend() as unknown as { device: GPUDevice }).device;
}

/** A WebGPU device of its own (for tests that lose it on purpose). */
export async function ownDevice(): Promise<GPUDevice> {
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) throw new Error('no WebGPU adapter');
  return adapter.requestDevice();
}

/**
 * tfjs's WebGPU device for a `describe` block (ready in `beforeAll`), and an `afterAll` check that
 * the block left as many of this package's GPU buffers as it found.
 */
export function deviceForBlock(): { readonly device: GPUDevice } {
  const holder = { device: undefined as unknown as GPUDevice };
  let buffersBefore = 0;
  beforeAll(async () => {
    holder.device = await tfjsDevice();
    buffersBefore = liveGpuBuffers().buffers;
  });
  afterAll(() => {
    expect(liveGpuBuffers().buffers).toBe(buffersBefore);
  });
  return holder;
}
