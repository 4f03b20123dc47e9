// Compiles `src/read/quest-kernel.wat` to WebAssembly bytes with WABT (the `wabt` package), SIMD
// enabled. Shared by the build script and the test that checks the embedded bytes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabtModule from 'wabt';

export const KERNEL_SOURCE = fileURLToPath(
  new URL('../src/read/quest-kernel.wat', import.meta.url),
);

/** The kernel's bytes, compiled from its WAT source. */
export async function compileQuestKernel() {
  const wabt = await wabtModule();
  const parsed = wabt.parseWat('quest-kernel.wat', readFileSync(KERNEL_SOURCE, 'utf8'), {
    simd: true,
  });
  try {
    parsed.validate();
    return Uint8Array.from(parsed.toBinary({}).buffer);
  } finally {
    parsed.destroy();
  }
}
