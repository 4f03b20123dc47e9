import { spawnSync } from 'node:child_process';

/** How the child process loads the module under test. */
export type LoadFormat = 'esm' | 'cjs';

/** What {@link modulesLoadedBy} saw. */
export interface LoadedModules {
  /** Number of the module's exports (0 would mean the import did not really happen). */
  readonly exports: number;
  /** Every resolved ESM URL and every file in `require.cache`, in load order per kind. */
  readonly modules: readonly string[];
}

// A resolve hook for `module.register` (Node 20 runs it off-thread): it writes each resolved URL
// to stderr with a synchronous write, so every line is out before `import()` settles.
const RESOLVE_HOOK = `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  writeSync(2, 'resolved ' + result.url + '\\n');
  return result;
}`;

const ESM_SCRIPT = (specifier: string) => `import { createRequire, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(RESOLVE_HOOK)}));
const m = await import(${JSON.stringify(specifier)});
const cache = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({ exports: Object.keys(m).length, cache }));`;

const CJS_SCRIPT = (specifier: string) => `const m = require(${JSON.stringify(specifier)});
console.log(JSON.stringify({ exports: Object.keys(m).length, cache: Object.keys(require.cache) }));`;

/**
 * Loads `specifier` in a bare `node` child process (no vitest transforms, no `NODE_OPTIONS`)
 * started in `cwd`, and reports every module that load brought in: for `esm`, each URL the ESM
 * loader resolved (recorded by a `module.register` resolve hook) plus the CommonJS modules it
 * required; for `cjs`, `require.cache`. A workspace package resolves to its built `dist` (build
 * it first), and a package resolves its own name from its own directory.
 *
 * @throws Error with the child's stderr when the import fails.
 */
export function modulesLoadedBy(specifier: string, cwd: string, format: LoadFormat): LoadedModules {
  const args =
    format === 'esm'
      ? ['--input-type=module', '-e', ESM_SCRIPT(specifier)]
      : ['-e', CJS_SCRIPT(specifier)];
  const { NODE_OPTIONS: _, ...env } = process.env;
  const child = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' });
  if (child.status !== 0) {
    throw new Error(`node could not load ${specifier} (${format}):\n${child.stderr}`);
  }
  const resolved = child.stderr
    .split('\n')
    .filter((line) => line.startsWith('resolved '))
    .map((line) => line.slice('resolved '.length));
  const { exports, cache } = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
    exports: number;
    cache: string[];
  };
  return { exports, modules: [...resolved, ...cache] };
}
