import { AttentionKernel } from './attention-kernel';

/** The realm's kernel, loaded at first use; null where it cannot run. */
let loaded: AttentionKernel | null | undefined;

/**
 * The realm's attention kernel, shared by every reader of a cache (a call fills its operands
 * before it runs, so calls do not interfere), or undefined where WebAssembly SIMD cannot run.
 */
export function realmKernel(): AttentionKernel | undefined {
  loaded ??= AttentionKernel.load() ?? null;
  return loaded ?? undefined;
}
