/**
 * A third-party file allowed to import Node built-ins from a Lethe main entry's bundle, because
 * it only reaches them on a Node-only path guarded at run time.
 */
export interface AllowedImporter {
  /**
   * The importing file as `<package name>/<path inside the package>` (the part of its path after
   * the last `node_modules/`), e.g. `@tensorflow/tfjs-core/dist/platforms/platform_node.js`.
   */
  readonly file: string;
  /** The built-ins it may import, as written in the file (`fs`, `node:fs`, …). */
  readonly specifiers: readonly string[];
  /** Why it is safe in a browser: the guard that keeps the import from running there. */
  readonly why: string;
}

/**
 * Third-party files whose Node built-in imports a browser build of a main entry may contain.
 * Lethe's own code is never listed here (the check refuses it): move it to a `./node` entry.
 *
 * Empty today. tfjs-core (`util`, `crypto`, `worker_threads`), tfjs-backend-wasm's Emscripten
 * glue (`fs`, `path`, `os`, `worker_threads`, `perf_hooks`) and seedrandom (`crypto`) do
 * `require` built-ins, but only on their Node branches, and each package's `browser` field maps
 * those names to `false`; the check resolves third-party imports as a browser bundler does, so
 * they are not reported. Add an entry only for a file a bundler cannot resolve that way, with
 * the reason it never runs in a browser.
 */
export const ALLOWED_IMPORTERS: readonly AllowedImporter[] = [];
