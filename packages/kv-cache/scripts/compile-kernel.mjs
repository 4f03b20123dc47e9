// Compiles the package's WebAssembly kernels from their WAT sources with WABT (the `wabt`
// package), SIMD enabled. Shared by the build script and the tests that check the embedded bytes.
import { fileURLToPath } from 'node:url';
import wabtModule from 'wabt';
import { compileWat } from '../../../scripts/wasm-kernels.mjs';

/** Each kernel: its WAT source and the module that embeds its bytes, both under `src/`. */
export const KERNELS = {
  quest: { source: 'read/quest-kernel.wat', embedded: 'read/quest-kernel-wasm.ts' },
  attention: { source: 'attend/attention-kernel.wat', embedded: 'attend/attention-kernel-wasm.ts' },
};

/** The absolute path of a file under `src/`. */
export function sourcePath(relative) {
  return fileURLToPath(new URL(`../src/${relative}`, import.meta.url));
}

/** The bytes of kernel `name` (a key of {@link KERNELS}), compiled from its WAT source. */
export function compileKernel(name) {
  return compileWat(wabtModule, sourcePath(KERNELS[name].source));
}
