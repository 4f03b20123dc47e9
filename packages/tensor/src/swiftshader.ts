/**
 * Vulkan driver manifest of SwiftShader (Vulkan on the CPU) as shipped by Debian's `chromium`
 * package (in `chromium-common`). Dawn accepts it, which gives Node a WebGPU adapter on
 * machines without a GPU: slow, but exact enough to test kernels.
 */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** The Vulkan loader bundled next to it; Debian only installs a system one with `libvulkan1`. */
const CHROMIUM_VULKAN_LOADER = '/usr/lib/chromium/libvulkan.so.1';

/** glibc's `RTLD_NODELETE`; Node's `os.constants.dlopen` does not list it. */
const RTLD_NODELETE = 0x1000;

/**
 * Points this process's Vulkan at Chromium's SwiftShader so that a WebGPU instance created
 * afterwards finds a (software) adapter. Acts only on Linux, only when the user has not chosen
 * Vulkan drivers (`VK_ICD_FILENAMES` and `VK_DRIVER_FILES` unset, or `VK_ICD_FILENAMES` set to
 * {@link SWIFTSHADER_ICD} by a parent process that ran this), and only when
 * {@link SWIFTSHADER_ICD} exists. Then it:
 *
 * 1. sets `VK_ICD_FILENAMES` (the Vulkan loader reads it each time an instance is created, so
 *    setting it from JavaScript works);
 * 2. loads Chromium's `libvulkan.so.1` and keeps it loaded, because Dawn `dlopen`s the loader
 *    by its bare name, which fails when no system loader is installed, while glibc resolves a
 *    bare name to an already-loaded library of that soname.
 *
 * @returns whether anything changed, i.e. whether a new WebGPU instance may now find an adapter.
 */
export function useChromiumSwiftShader(): boolean {
  if (typeof process === 'undefined' || process.platform !== 'linux') return false;
  // a parent process that ran this passes VK_ICD_FILENAMES on: that choice is ours, the loader
  // still has to be loaded here
  const inherited =
    process.env.VK_ICD_FILENAMES === SWIFTSHADER_ICD && !process.env.VK_DRIVER_FILES;
  if ((process.env.VK_ICD_FILENAMES || process.env.VK_DRIVER_FILES) && !inherited) return false;
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  if (!fs.existsSync(SWIFTSHADER_ICD)) return false;
  if (fs.existsSync(CHROMIUM_VULKAN_LOADER)) {
    const os = process.getBuiltinModule('node:os') as typeof import('node:os');
    try {
      process.dlopen(
        { exports: {} },
        CHROMIUM_VULKAN_LOADER,
        os.constants.dlopen.RTLD_NOW | RTLD_NODELETE,
      );
    } catch {
      // Expected: it loads, then Node reports that it is not a Node addon. RTLD_NODELETE keeps
      // it in memory regardless. If it truly failed to load, the retry simply finds no adapter.
    }
  }
  process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  return true;
}
