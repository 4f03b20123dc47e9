// Rebuilds the modules that embed the WebAssembly kernels' bytes (base64) from their WAT
// sources — `src/read/quest-kernel-wasm.ts`, `src/attend/attention-kernel-wasm.ts`. Run after
// editing a WAT:
//
//   cd packages/kv-cache && npm run build:kernels
import { writeEmbedded } from '../../../scripts/wasm-kernels.mjs';
import { compileKernel, KERNELS, sourcePath } from './compile-kernel.mjs';

for (const [name, { source, embedded }] of Object.entries(KERNELS)) {
  const constant = `${name.toUpperCase()}_KERNEL_WASM`;
  writeEmbedded(sourcePath(embedded), constant, name, source, await compileKernel(name));
}
