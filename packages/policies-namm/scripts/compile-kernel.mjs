// Compiles the package's WebAssembly kernel from its WAT source with WABT (the `wabt` package),
// SIMD enabled. Shared by the build script and the test that checks the embedded bytes.
import { fileURLToPath } from 'node:url';
import wabtModule from 'wabt';
import { compileWat } from '../../../scripts/wasm-kernels.mjs';

/** The BAM kernel's WAT source and the module that embeds its bytes. */
export const BAM_KERNEL = {
  source: fileURLToPath(new URL('../src/scorer/bam-kernel.wat', import.meta.url)),
  embedded: fileURLToPath(new URL('../src/scorer/bam-kernel-wasm.ts', import.meta.url)),
};

/** The bytes of the BAM kernel, compiled from its WAT source. */
export function compileBamKernel() {
  return compileWat(wabtModule, BAM_KERNEL.source);
}
