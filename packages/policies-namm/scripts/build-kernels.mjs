// Rebuilds `src/scorer/bam-kernel-wasm.ts`, which embeds the BAM kernel's bytes (base64), from
// `bam-kernel.wat`. Run after editing the WAT:
//
//   cd packages/policies-namm && npm run build:kernels
import { writeEmbedded } from '../../../scripts/wasm-kernels.mjs';
import { BAM_KERNEL, compileBamKernel } from './compile-kernel.mjs';

writeEmbedded(
  BAM_KERNEL.embedded,
  'BAM_KERNEL_WASM',
  'BAM',
  BAM_KERNEL.source,
  await compileBamKernel(),
);
