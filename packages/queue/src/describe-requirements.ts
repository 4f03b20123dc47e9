import { readdir, stat } from 'node:fs/promises';
import { contentHash } from './content-hash';
import { dependencyVersions } from './package-versions';
import { countsAsComputing, type RunRequirements } from './requirements';

/** What {@link describeRequirements} reads. */
export interface RequirementSources {
  /** The package that computes the items (e.g. `@lethe/eval`); its dependencies are read too. */
  readonly root: string;
  /** A file inside the installation the package resolves from (a path or `file:` URL). */
  readonly from: string | URL;
  /** The paths the items read. */
  readonly files: readonly string[];
}

/**
 * This installation's {@link RunRequirements} for `sources`: the versions of `root` and the
 * Lethe and tfjs packages below it, and the hash of each file or directory (a missing one hashes
 * to `"missing"`).
 */
export async function describeRequirements(sources: RequirementSources): Promise<RunRequirements> {
  const files: Record<string, string> = {};
  for (const path of [...new Set(sources.files)].sort()) {
    files[path] = (await contentHash(path)) ?? 'missing';
  }
  const { root, from } = sources;
  return { root, packages: dependencyVersions(root, from, countsAsComputing), files };
}

/**
 * Checks this installation against a run's requirements, caching each path's hash while the
 * path's files keep their sizes and times.
 */
export class RequirementChecker {
  private readonly hashes = new Map<string, { readonly stamp: string; readonly hash: string }>();
  private readonly versions = new Map<string, Readonly<Record<string, string>>>();

  /**
   * How this installation differs from `required` (its `root` resolved from `from`): one line per
   * package of another version (or missing) and per file of other contents (or missing); empty
   * when it can take them.
   */
  async mismatches(required: RunRequirements, from: string | URL): Promise<string[]> {
    const lines: string[] = [];
    const { root } = required;
    const cacheKey = `${root}\0${String(from)}`;
    let here = this.versions.get(cacheKey);
    if (here === undefined) {
      here = dependencyVersions(root, from, countsAsComputing);
      this.versions.set(cacheKey, here);
    }
    const names = new Set([...Object.keys(required.packages), ...Object.keys(here)]);
    for (const name of [...names].sort()) {
      const want = required.packages[name];
      const have = here[name];
      if (want !== have) {
        lines.push(
          `${name}: ${have ?? 'not installed'} here, ${want ?? 'not installed'} in the run`,
        );
      }
    }
    for (const [path, want] of Object.entries(required.files)) {
      const have = await this.hashOf(path);
      if (have !== want) {
        lines.push(
          have === 'missing'
            ? `${path}: missing here`
            : want === 'missing'
              ? `${path}: present here, missing in the run`
              : `${path}: other contents here (sha256 ${have.slice(0, 12)}…, the run's ${want.slice(0, 12)}…)`,
        );
      }
    }
    return lines;
  }

  private async hashOf(path: string): Promise<string> {
    const stamp = await stampOf(path);
    const cached = this.hashes.get(path);
    if (cached !== undefined && cached.stamp === stamp) return cached.hash;
    const hash = (await contentHash(path)) ?? 'missing';
    this.hashes.set(path, { stamp, hash });
    return hash;
  }
}

/** A path's size and modification time, and for a directory its own (a cheap change check). */
async function stampOf(path: string): Promise<string> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return 'missing';
  if (info.isFile()) return `${info.size}:${info.mtimeMs}`;
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  const parts: string[] = [];
  for (const entry of entries) {
    const full = `${entry.parentPath}/${entry.name}`;
    const child = await stat(full).catch(() => undefined);
    if (child?.isFile()) parts.push(`${full}:${child.size}:${child.mtimeMs}`);
  }
  return parts.sort().join('|');
}
