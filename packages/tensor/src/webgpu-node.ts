import { LetheError } from './errors';

/** Debian's chromium package ships SwiftShader, a Vulkan driver on the CPU that Dawn accepts. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

interface GpuLike {
  requestAdapter(options?: unknown): Promise<unknown>;
}

let registered = false;

/**
 * Makes `navigator.gpu` available and registers tfjs's webgpu backend.
 *
 * In a browser `navigator.gpu` already exists. In Node the optional `webgpu` package (Dawn) is
 * loaded; on a machine without a GPU set `VK_ICD_FILENAMES` to a Vulkan driver such as
 * {@link SWIFTSHADER_ICD} before the process starts (Dawn reads it when it loads).
 *
 * @returns whether a WebGPU adapter is available. With `required`, throws `E_BACKEND` instead of
 * returning false.
 */
export async function ensureWebGpu(options: { required: boolean }): Promise<boolean> {
  const fail = (why: string): false => {
    if (options.required) throw new LetheError('E_BACKEND', why, 'webgpu');
    return false;
  };
  const g = globalThis as { navigator?: { gpu?: GpuLike; userAgent?: string } };
  if (!g.navigator?.gpu) {
    const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined;
    if (!isNode) return fail('this browser has no navigator.gpu');
    let dawn: { create(flags: string[]): GpuLike; globals: Record<string, unknown> };
    try {
      dawn = (await import('webgpu')) as unknown as typeof dawn;
    } catch (cause) {
      return fail(`the optional "webgpu" package could not be loaded (${String(cause)})`);
    }
    Object.assign(globalThis, dawn.globals);
    const gpu = dawn.create(['backend=vulkan']);
    // Node 20 has no global navigator; Node ≥ 21 has a read-only one, so define the property.
    Object.defineProperty(globalThis, 'navigator', {
      value: { ...(g.navigator ?? {}), gpu, userAgent: g.navigator?.userAgent ?? 'node' },
      configurable: true,
      writable: true,
    });
  }
  const adapter = await (g.navigator as { gpu: GpuLike }).gpu.requestAdapter().catch(() => null);
  if (!adapter) return fail('no WebGPU adapter found (in Node, is VK_ICD_FILENAMES set?)');
  if (!registered) {
    await import('@tensorflow/tfjs-backend-webgpu');
    registered = true;
  }
  return true;
}
