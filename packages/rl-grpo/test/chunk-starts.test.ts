import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkStarts } from '../src/index';

describe('chunkStarts', () => {
  it('splits 7 over 3 as 3, 2, 2 and gives nothing for no requests', () => {
    expect(chunkStarts(7, 3)).toEqual([0, 3, 5]);
    expect(chunkStarts(0, 4)).toEqual([]);
    expect(chunkStarts(2, 5)).toEqual([0, 1]);
  });

  it('covers 0 … n − 1 with min(threads, n) contiguous chunks differing by at most one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 64 }),
        (n, threads) => {
          const starts = chunkStarts(n, threads);
          const sizes = starts.map((s, c) => (starts[c + 1] ?? n) - s);
          expect(starts[0]).toBe(0);
          expect(starts).toHaveLength(Math.min(threads, n));
          expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });
});
