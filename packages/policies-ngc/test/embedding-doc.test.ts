import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's NGC example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(pkg, '../../docs/embedding.md');

describe('docs/embedding.md', () => {
  it('the NGC example keeps whole blocks, the same in both heads, round after round', () => {
    const match = /^(\d+) rounds; kept (.*)$/.exec(runDocExample(doc, '### NGC', pkg).trim());
    expect(match).not.toBeNull();
    // 32 tokens, a round every 8.
    expect(Number(match![1])).toBe(4);
    const heads = match![2]!.split(' | ').map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    expect(heads[1]).toEqual(heads[0]);
    // 16 rows = 4 blocks of 4 before the last round; ε = 0.5 keeps 2 of them, whole.
    const rows = heads[0]!;
    expect(rows).toHaveLength(8);
    for (let b = 0; b < rows.length; b += 4) {
      expect(rows[b]! % 4).toBe(0);
      expect(rows.slice(b, b + 4)).toEqual([0, 1, 2, 3].map((i) => rows[b]! + i));
    }
  });
});
