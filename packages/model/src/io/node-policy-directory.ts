import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unreadableFile } from '@lethe/core';
import {
  checkPolicyContents,
  formatPolicyManifest,
  openPolicyDirectory,
  POLICY_MANIFEST,
  type PolicyDirectory,
  type PolicyDirectoryContents,
  type PolicyFiles,
} from '@lethe/kv-cache';
import { checkDirectory, writeFileAtomic } from './node-fs';

/**
 * Writes a policy directory — every learned method's (GSA gates, a NAMM scorer, a SOL controller,
 * an NGC run's manifest): the files of `contents` first, each atomically, then `policy.json`, so
 * a directory with a manifest is always complete. Creates `dir` when missing; other files in it
 * (an NGC run's model, checkpoints) are left alone.
 *
 * @example
 * ```ts
 * await writePolicyDirectory('policies/namm', nammPolicyContents(parameters, { updateInterval: 32 }));
 * ```
 * @throws LetheError `E_ARG` naming `dir`, `E_FORMAT`/`E_ARG` naming `contents…` (see
 *   `checkPolicyContents`).
 */
export async function writePolicyDirectory(
  dir: string,
  contents: PolicyDirectoryContents,
): Promise<void> {
  checkDirectory(dir);
  const { manifest, files } = checkPolicyContents(contents);
  const text = formatPolicyManifest(manifest);
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) await writeFileAtomic(join(dir, name), bytes);
  await writeFileAtomic(join(dir, POLICY_MANIFEST), text);
}

/**
 * The files of the policy directory `dir` on disk; a file that cannot be read (missing, a
 * directory, no permission) is `E_CHECKPOINT` naming its path and why.
 */
export function nodePolicyFiles(dir: string): PolicyFiles {
  const read = async (name: string): Promise<Uint8Array> => {
    const path = join(dir, name);
    try {
      return new Uint8Array(await readFile(path));
    } catch (error) {
      throw unreadableFile(path, error);
    }
  };
  return {
    location: dir,
    readText: async (name) => new TextDecoder().decode(await read(name)),
    readBytes: read,
  };
}

/**
 * Opens the policy directory `dir` on disk: reads and checks its `policy.json`
 * (`openPolicyDirectory` over {@link nodePolicyFiles}).
 *
 * @throws LetheError `E_CHECKPOINT` naming `policy.json` when it cannot be read, `E_FORMAT` for a
 *   bad manifest.
 */
export function readPolicyDirectory(dir: string): Promise<PolicyDirectory> {
  return openPolicyDirectory(nodePolicyFiles(dir));
}
