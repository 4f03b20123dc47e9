import { LetheError } from '@lethe/core';
import type { RunRequirements } from './requirements';

/** Redis key prefix of every Lethe queue. */
export const QUEUE_PREFIX = 'lethe';

/** What one job of a queue carries: its run, what a worker must have, and the item itself. */
export interface QueueJobData<P = unknown> {
  /** The run's id (the same for a rerun of the same work). */
  readonly run: string;
  readonly requirements: RunRequirements;
  readonly payload: P;
}

const SAFE = /^[A-Za-z0-9_.-]+$/;

/** The BullMQ queue of items of `kind` (`lethe-<kind>`). */
export function queueName(kind: string): string {
  if (typeof kind !== 'string' || !SAFE.test(kind)) {
    throw new LetheError(
      'E_ARG',
      `must be letters, digits, _ . or -, got ${JSON.stringify(kind)}`,
      'kind',
    );
  }
  return `lethe-${kind}`;
}

/**
 * The job id of item `key` of run `run`: stable, so a rerun of the run finds the jobs an earlier
 * coordinator left (done or not) instead of adding them again.
 *
 * @throws LetheError `E_ARG` naming `run` or `key` when it is empty or holds characters other
 *   than letters, digits, `_`, `.` and `-`.
 */
export function jobIdOf(run: string, key: string): string {
  if (typeof run !== 'string' || !SAFE.test(run)) {
    throw new LetheError(
      'E_ARG',
      `must be letters, digits, _ . or -, got ${JSON.stringify(run)}`,
      'run',
    );
  }
  if (typeof key !== 'string' || !SAFE.test(key)) {
    throw new LetheError(
      'E_ARG',
      `must be letters, digits, _ . or -, got ${JSON.stringify(key)}`,
      'key',
    );
  }
  return `run-${run}-item-${key}`;
}
