import { tf } from './tf';

/** tfjs-backend-webgpu's flag choosing the matmul program (its `MatMulProgramType`; -1: its own pick). */
const MATMUL_PROGRAM_FLAG = 'WEBGPU_MATMUL_PROGRAM_TYPE';
/** `MatMulProgramType.MatMulPackedProgram`: the tiled program, no reduction across a workgroup. */
const PACKED_MATMUL = 3;
/** tfjs's default: it picks per shape. */
const TFJS_PICKS = -1;

/**
 * Chooses tfjs's tiled matmul program on a software WebGPU adapter (SwiftShader).
 *
 * For a product with few outputs — every projection of a small model's decode step — tfjs picks
 * `MatMulReduceProgram`, which sums over the inner dimension across a workgroup. That suits a
 * GPU; SwiftShader runs a workgroup's invocations on a CPU thread, and there the tiled program
 * is 24–36× faster for such products and as fast for larger ones (`bench/matmul-programs.ts`).
 * Results differ by the float32 rounding of the sums only. A value the flag already holds other
 * than tfjs's default stands; a hardware adapter keeps tfjs's choice.
 */
export function chooseMatMulForAdapter(software: boolean): void {
  const env = tf.env();
  if (!software || env.getNumber(MATMUL_PROGRAM_FLAG) !== TFJS_PICKS) return;
  env.set(MATMUL_PROGRAM_FLAG, PACKED_MATMUL);
}
