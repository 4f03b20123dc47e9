import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's adapter example, run as written by a bare `node` from this package's
// directory (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(pkg, '../../docs/embedding.md');

describe('docs/embedding.md', () => {
  it('the one-function adapter example runs and keeps its budget and anchors', () => {
    const printed = runDocExample(doc, '### The one-function adapter', pkg);
    const heads = printed
      .trim()
      .split(' | ')
      .map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    for (const positions of heads) {
      // keepCount 7 per head after the last round (20 tokens, a round whenever a head holds 8),
      // sink 0, window 18–19.
      expect(positions).toHaveLength(7);
      expect(positions[0]).toBe(0);
      expect(positions.slice(-2)).toEqual([18, 19]);
    }
  });
});
