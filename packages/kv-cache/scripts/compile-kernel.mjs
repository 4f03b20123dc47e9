// Compiles the package's WebAssembly kernels from their WAT sources with WABT (the `wabt`
// package), SIMD enabled. Shared by the build script and the tests that check the embedded bytes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabtModule from 'wabt';

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
export async function compileKernel(name) {
  const { source } = KERNELS[name];
  const wabt = await wabtModule();
  const parsed = wabt.parseWat(source, readFileSync(sourcePath(source), 'utf8'), { simd: true });
  try {
    parsed.validate();
    return Uint8Array.from(parsed.toBinary({}).buffer);
  } finally {
    parsed.destroy();
  }
}
