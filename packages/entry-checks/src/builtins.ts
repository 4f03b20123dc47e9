import { builtinModules } from 'node:module';

const BUILTINS = new Set(builtinModules);

/**
 * Whether `specifier` names a Node built-in: anything with the `node:` scheme (including the
 * scheme-only ones such as `node:test`), or a bare built-in name or subpath (`fs`,
 * `fs/promises`, `worker_threads`, …) as Node's `builtinModules` lists them.
 */
export function isNodeBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier);
}

/** `specifier` without the `node:` scheme (tsup's builds drop it; sources may keep it). */
export function bareBuiltin(specifier: string): string {
  return specifier.startsWith('node:') ? specifier.slice('node:'.length) : specifier;
}
