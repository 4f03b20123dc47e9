/**
 * Instantiates an embedded WebAssembly module (its bytes in base64), or returns undefined where
 * it cannot run — no WebAssembly, instructions the runtime lacks (SIMD), or a page whose Content
 * Security Policy forbids compiling WebAssembly — so that the caller's portable form, which
 * computes the same bits, runs instead. Compiled synchronously: the package's kernels stay under
 * the 4 KB a browser's main thread may compile synchronously (tests hold them there).
 */
export function instantiateEmbedded(base64: string): WebAssembly.Exports | undefined {
  if (typeof WebAssembly !== 'object') return undefined;
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  if (!WebAssembly.validate(bytes)) return undefined;
  try {
    return new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports;
  } catch {
    return undefined; // compilation refused (a CSP without 'wasm-unsafe-eval')
  }
}
