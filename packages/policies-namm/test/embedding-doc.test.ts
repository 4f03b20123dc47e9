import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's NAMM example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(pkg, '../../docs/embedding.md');

describe('docs/embedding.md', () => {
  it('the NAMM example reads every query once and keeps half of each head per round', () => {
    const lines = runDocExample(doc, '### NAMM', pkg).trim().split('\n');
    // A round every 16 tokens, each reading the 16 queries since the previous one; a rate of 0.5
    // keeps ⌈live / 2⌉: 16 → 8, 8 + 16 → 12, 12 + 16 → 14.
    expect(lines.slice(0, 3)).toEqual([
      'round at 16: 16 queries read, 8 rows kept',
      'round at 32: 16 queries read, 12 rows kept',
      'round at 48: 16 queries read, 14 rows kept',
    ]);
    expect(lines).toHaveLength(4);
    const heads = lines[3]!.split(' | ').map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    for (const positions of heads) {
      expect(positions).toHaveLength(14);
      expect(positions.at(-1)).toBe(47); // the newest row, NAMM's one anchor
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
  });
});
