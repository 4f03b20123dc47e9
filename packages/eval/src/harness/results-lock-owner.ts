// Node-only: who holds a results-file lock, so that a rerun on the same machine need not wait for
// the lock of a killed run to go stale.

import { readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { writeFileAtomic } from '@lethe/model/node';

interface LockOwner {
  readonly host: string;
  readonly pid: number;
}

/** `<path>.lock-owner`: beside the lock directory, which its library removes with `rmdir`. */
const ownerFile = (path: string): string => `${path}.lock-owner`;

/** Records this process as the holder of `path`'s lock. */
export async function writeLockOwner(path: string): Promise<void> {
  const owner: LockOwner = { host: hostname(), pid: process.pid };
  await writeFileAtomic(ownerFile(path), `${JSON.stringify(owner)}\n`);
}

/** Forgets the holder of `path`'s lock (before the lock is freed). */
export async function removeLockOwner(path: string): Promise<void> {
  await rm(ownerFile(path), { force: true });
}

/**
 * Removes `path`'s lock when its recorded holder is a process of this machine that is gone (a
 * run killed without a chance to unlock), and says whether it did. A lock of another machine, of
 * a live process or without a recorded holder is left to go stale.
 */
export async function removeLockOfDeadHolder(path: string): Promise<boolean> {
  let owner: LockOwner;
  try {
    owner = JSON.parse(await readFile(ownerFile(path), 'utf8')) as LockOwner;
  } catch {
    return false;
  }
  if (owner.host !== hostname() || owner.pid === process.pid || isAlive(owner.pid)) return false;
  await rm(`${path}.lock`, { recursive: true, force: true });
  await removeLockOwner(path);
  return true;
}

function isAlive(pid: unknown): boolean {
  if (!(Number.isSafeInteger(pid) && (pid as number) > 0)) return true;
  try {
    process.kill(pid as number, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but is not ours to signal.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
