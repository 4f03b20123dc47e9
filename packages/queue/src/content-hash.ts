import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/**
 * The SHA-256 of what is at `path`, hex: of a file its bytes; of a directory every file below it
 * (links followed), in the order of their paths relative to it (`/`-separated), each as its
 * relative path, its length and its bytes — so two directories hash alike exactly when they
 * hold the same files with the same contents, wherever they lie and whatever their times.
 *
 * @returns `undefined` when nothing is at `path`.
 */
export async function contentHash(path: string): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return undefined;
  const hash = createHash('sha256');
  if (info.isFile()) {
    hash.update(await readFile(path));
    return hash.digest('hex');
  }
  for (const file of await filesBelow(path)) {
    const bytes = await readFile(file);
    const name = relative(path, file).split(sep).join('/');
    hash.update(`${name}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

/** Every file below `dir`, sorted by path. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  const files: string[] = [];
  for (const entry of entries) {
    const full = join(dir, entry);
    if ((await stat(full)).isFile()) files.push(full);
  }
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
