import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LetheError } from '@lethe/core';

/**
 * The versions of package `root` and of every package it depends on, directly or not, whose
 * name `include` accepts, as they resolve from `from` (a file path or `file:` URL inside the
 * installation; a relative path resolves against the working directory): `{ name: version }`, sorted by name. Each dependency resolves from the package
 * that names it, as Node would load it.
 *
 * @example
 * ```ts
 * dependencyVersions('@lethe/eval', import.meta.url, (name) => name.startsWith('@lethe/'));
 * // { '@lethe/core': '0.1.0', '@lethe/eval': '0.1.0', … }
 * ```
 * @throws LetheError `E_ARG` naming `root` when it cannot be resolved from `from`.
 */
export function dependencyVersions(
  root: string,
  from: string | URL,
  include: (name: string) => boolean,
): Record<string, string> {
  const start =
    typeof from === 'string' && !from.startsWith('file:') ? resolve(from) : fileURLToPath(from);
  const versions = new Map<string, string>();
  const visit = (name: string, fromFile: string): void => {
    if (versions.has(name)) return;
    const manifestPath = packageManifest(name, fromFile);
    if (manifestPath === undefined) {
      if (versions.size === 0) {
        throw new LetheError('E_ARG', `cannot be resolved from ${start}`, 'root');
      }
      return;
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      version?: string;
      dependencies?: Record<string, string>;
    };
    versions.set(name, manifest.version ?? '');
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      if (include(dependency)) visit(dependency, manifestPath);
    }
  };
  visit(root, start);
  return Object.fromEntries([...versions].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The `package.json` of package `name` as Node resolves it from `fromFile`, if it resolves. */
function packageManifest(name: string, fromFile: string): string | undefined {
  const require = createRequire(fromFile);
  try {
    return require.resolve(`${name}/package.json`);
  } catch {
    // A package whose exports leave out package.json: walk up from its entry.
  }
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (!existsSync(candidate)) continue;
    const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
    if (manifest.name === name) return candidate;
  }
  return undefined;
}
