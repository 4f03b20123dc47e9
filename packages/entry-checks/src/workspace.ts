import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A published (non-private) package of the workspace. */
export interface PublicPackage {
  /** `name` of its package.json. */
  readonly name: string;
  /** Its directory, relative to the root (`packages/<dir>`). */
  readonly dir: string;
  /** Its main entry's ESM file (`exports['.'].import.default`), relative to the root. */
  readonly mainEntry: string;
}

interface Manifest {
  readonly name?: string;
  readonly private?: boolean;
  readonly exports?: unknown;
  readonly bin?: unknown;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

/** The package.json of `dir` (relative to `root`). */
export function readManifest(root: string, dir: string): Manifest {
  return JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;
}

/**
 * Every non-private package under `packages/` that can be imported (not a command-line package
 * with only a `bin`), in directory order, read from its package.json (so a package added later is
 * included without changing this list).
 *
 * @throws Error naming the package when its `exports['.']` has no ESM file.
 */
export function publicPackages(root: string): PublicPackage[] {
  return readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => {
      const dir = `packages/${d.name}`;
      let manifest: Manifest;
      try {
        manifest = readManifest(root, dir);
      } catch {
        return []; // not a package (no package.json)
      }
      if (manifest.private === true) return [];
      // A command-line package (a `bin`, no `exports`) has no entry to import.
      if (manifest.exports === undefined && manifest.bin !== undefined) return [];
      const name = manifest.name ?? dir;
      return [{ name, dir, mainEntry: `${dir}/${esmMainEntry(manifest.exports, name)}` }];
    });
}

/** `exports['.'].import.default` (or the plain string `exports['.']`), without its `./`. */
function esmMainEntry(exports: unknown, name: string): string {
  const main = (exports as Record<string, unknown> | undefined)?.['.'];
  const esm = typeof main === 'string' ? main : importDefault(main);
  if (typeof esm !== 'string') {
    throw new Error(`${name}: package.json has no exports['.'].import.default`);
  }
  return esm.replace(/^\.\//, '');
}

function importDefault(main: unknown): unknown {
  const imported = (main as Record<string, unknown> | undefined)?.import;
  return typeof imported === 'string'
    ? imported
    : (imported as Record<string, unknown> | undefined)?.default;
}
