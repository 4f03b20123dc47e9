import { fileURLToPath } from 'node:url';
import type { CellResult } from '../../src/harness/index';

/** The absolute path of a committed model or policy directory (`models/<name>`). */
export const committedModel = (name: string): string =>
  fileURLToPath(new URL(`../../../../models/${name}`, import.meta.url));

/**
 * A small sweep on committed models that the pooled and queued runners are checked against one
 * thread with: two tasks, heuristics and a learned policy, two budgets.
 */
export const COMMITTED_SWEEP = {
  tasks: [
    {
      name: 'retrieval',
      options: { variant: 'niah-single', contextChars: 256, valueDigits: 2 },
      prefillChunk: 4,
    },
    { name: 'lm', options: { documentChars: 128 } },
  ],
  policies: [
    'full',
    'h2o',
    'snapkv',
    { name: 'namm', dir: committedModel('namm-retrieval'), tasks: ['retrieval'] },
  ],
  budgets: [0.5, 0.25],
  seeds: [0],
  examplesPerCell: 4,
  batchSize: 4,
  checkpoints: { retrieval: committedModel('retrieval'), lm: committedModel('lm') },
};

/** A cell without what depends on the clock: its wall time and throughput. */
export function timeless(cell: CellResult): unknown {
  const { elapsedMs: _elapsed, metrics, ...rest } = cell;
  const { tokensPerSecond: _speed, ...measured } = metrics;
  return { ...rest, metrics: measured };
}
