import { LetheError } from '@lethe/core';
import { SWIFTSHADER_ICD, useChromiumSwiftShader } from './swiftshader';

export { SWIFTSHADER_ICD };

interface GpuAdapterLike {
  readonly info?: { readonly isFallbackAdapter?: boolean; readonly description?: string };
  readonly isFallbackAdapter?: boolean;
}

interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}

interface DawnModule {
  create(flags: string[]): GpuLike;
  globals: Record<string, unknown>;
}

/** Options of {@link ensureWebGpu}. */
export interface EnsureWebGpuOptions {
  /** Throw `E_BACKEND` with the reason instead of returning false. */
  readonly required: boolean;
  /**
   * Accept a software adapter (`isFallbackAdapter`, e.g. SwiftShader). Default true. In Node on
   * Linux this also permits falling back to Chromium's SwiftShader when no Vulkan driver
   * answers (see {@link SWIFTSHADER_ICD}).
   */
  readonly allowSoftware?: boolean;
}

// tfjs's webgpu backend asks for this preference; ask for the same adapter it will get.
const ADAPTER_OPTIONS = { powerPreference: 'high-performance' };

/** The optional peer dependency that brings Dawn (WebGPU) to Node. */
const DAWN_PACKAGE = 'webgpu';

let dawnModule: Promise<DawnModule> | undefined;
let tfjsWebGpu: Promise<unknown> | undefined;
/** Whether the adapter {@link ensureWebGpu} last found is a software one. */
let softwareAdapter = false;

/** Whether the WebGPU adapter found last by {@link ensureWebGpu} is a software one (SwiftShader). */
export function isSoftwareAdapter(): boolean {
  return softwareAdapter;
}

/**
 * Makes `navigator.gpu` available and registers tfjs's webgpu backend.
 *
 * In a browser `navigator.gpu` already exists. In Node the optional `webgpu` package (Dawn) is
 * loaded and installed as `globalThis.navigator.gpu` (with Dawn's `GPU*` globals) once an
 * adapter is found. If none is found on Linux and software adapters are allowed, it falls back
 * to the SwiftShader driver of Debian's `chromium` package (see {@link SWIFTSHADER_ICD}) unless
 * `VK_ICD_FILENAMES` or `VK_DRIVER_FILES` is set, in which case the user's choice stands.
 *
 * @returns whether a usable WebGPU adapter exists. With `required`, throws `E_BACKEND` naming the
 * reason instead of returning false.
 */
export async function ensureWebGpu(options: EnsureWebGpuOptions): Promise<boolean> {
  const allowSoftware = options.allowSoftware ?? true;
  const fail = (why: string): false => {
    if (options.required) throw new LetheError('E_BACKEND', why, 'webgpu');
    return false;
  };
  const nav = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator;
  let adapter: GpuAdapterLike | null;
  if (nav?.gpu) {
    adapter = await requestAdapter(nav.gpu);
  } else {
    if (typeof process === 'undefined' || process.versions?.node === undefined) {
      return fail('this JavaScript runtime has no navigator.gpu');
    }
    let dawn: DawnModule;
    try {
      // Node-only optional peer: keep browser bundlers from trying to resolve it.
      dawnModule ??= import(
        /* webpackIgnore: true */ /* @vite-ignore */ DAWN_PACKAGE
      ) as Promise<DawnModule>;
      dawn = await dawnModule;
    } catch (cause) {
      dawnModule = undefined;
      return fail(`the optional "webgpu" package could not be loaded (${String(cause)})`);
    }
    let gpu = dawn.create(dawnFlags());
    adapter = await requestAdapter(gpu);
    if (!adapter && allowSoftware && useChromiumSwiftShader()) {
      gpu = dawn.create(dawnFlags());
      adapter = await requestAdapter(gpu);
    }
    if (adapter && (allowSoftware || !isSoftware(adapter))) installNavigatorGpu(gpu, dawn.globals);
  }
  if (!adapter) return fail(`no WebGPU adapter found${nodeHint()}`);
  softwareAdapter = isSoftware(adapter);
  if (!allowSoftware && isSoftware(adapter)) {
    const name = adapter.info?.description ?? 'fallback adapter';
    return fail(
      `only a software WebGPU adapter is available (${name}); ask for 'webgpu' explicitly to use it`,
    );
  }
  try {
    tfjsWebGpu ??= import('@tensorflow/tfjs-backend-webgpu');
    await tfjsWebGpu;
  } catch (cause) {
    tfjsWebGpu = undefined;
    return fail(`@tensorflow/tfjs-backend-webgpu could not be loaded (${String(cause)})`);
  }
  return true;
}

/** What to check when Node finds no adapter. */
function nodeHint(): string {
  if (typeof process === 'undefined' || process.versions?.node === undefined) return '';
  const chosen = process.env.VK_ICD_FILENAMES ?? process.env.VK_DRIVER_FILES;
  if (chosen)
    return ` with the Vulkan driver manifest(s) ${chosen} (VK_ICD_FILENAMES / VK_DRIVER_FILES)`;
  return (
    ' (Node needs a Vulkan driver; without a GPU, on Linux, install the chromium package ' +
    `for SwiftShader: ${SWIFTSHADER_ICD})`
  );
}

/** Whether `adapter` is a software (CPU) implementation such as SwiftShader. */
function isSoftware(adapter: GpuAdapterLike): boolean {
  return adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false;
}

async function requestAdapter(gpu: GpuLike): Promise<GpuAdapterLike | null> {
  return gpu.requestAdapter(ADAPTER_OPTIONS).catch(() => null);
}

/** Vulkan is Dawn's only full WebGPU backend on Linux; elsewhere Dawn's default is right. */
function dawnFlags(): string[] {
  return process.platform === 'linux' ? ['backend=vulkan'] : [];
}

function installNavigatorGpu(gpu: GpuLike, globals: Record<string, unknown>): void {
  // tfjs's webgpu backend uses the GPUBufferUsage / GPUMapMode / ... globals.
  Object.assign(globalThis, globals);
  const g = globalThis as { navigator?: object };
  const property = { value: gpu, configurable: true, writable: true };
  // Node >= 21 has a global navigator (whose getters live on its prototype): add `gpu` to it.
  // Node 20 has none: create one.
  if (g.navigator) Object.defineProperty(g.navigator, 'gpu', property);
  else g.navigator = Object.defineProperty({ userAgent: 'node' }, 'gpu', property);
}
