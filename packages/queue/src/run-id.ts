import { createHash } from 'node:crypto';
import { encodeQueueValue } from './queue-json';

/**
 * A run id for `runOnQueue` that names what the run computes: the first 24 hex digits of the
 * SHA-256 of `work` as `encodeQueueValue` writes it (typed arrays by their values). The same work
 * gives the same id, so a coordinator run again after its death takes over its jobs.
 */
export function runIdOf(work: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(encodeQueueValue(work, 'work')))
    .digest('hex')
    .slice(0, 24);
}
