/**
 * Compiles an embedded WebAssembly module (its bytes in base64), or returns undefined where it
 * cannot run — no WebAssembly, instructions the runtime lacks (SIMD), or a page whose Content
 * Security Policy forbids compiling WebAssembly — so that the caller's portable form, which
 * computes the same bits, runs instead. Compiled synchronously: a browser's main thread compiles
 * modules of up to 4 KB so (the Lethe kernels' tests hold them there).
 */
export function compileEmbedded(base64: string): WebAssembly.Module | undefined {
  if (typeof WebAssembly !== 'object') return undefined;
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  if (!WebAssembly.validate(bytes)) return undefined;
  try {
    return new WebAssembly.Module(bytes);
  } catch {
    return undefined; // compilation refused (a CSP without 'wasm-unsafe-eval')
  }
}

/**
 * {@link compileEmbedded}, instantiated without imports: the module's exports, or undefined where
 * it cannot run.
 */
export function instantiateEmbedded(base64: string): WebAssembly.Exports | undefined {
  const module = compileEmbedded(base64);
  return module === undefined ? undefined : new WebAssembly.Instance(module, {}).exports;
}
