import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evictionVisibility } from '../../src/train/eviction-mask';
import { simulateCache } from './simulated-cache';

describe('evictionVisibility', () => {
  it('shows each row exactly what a cache evicting token by token holds (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 4, max: 24 }),
        fc.nat(3),
        fc.nat(5),
        fc.integer({ min: 0, max: 1 << 30 }),
        (batch, outputs, length, sinks, window, seed) => {
          // distinct scores; lengths and budgets drawn per sequence from the seed
          let state = seed;
          const next = () => {
            state = (state * 1103515245 + 12345) >>> 1;
            return state / 2 ** 31;
          };
          const scores = Float32Array.from(
            { length: batch * outputs * length },
            (_, i) => i / 7 - Math.floor(next() * 1000),
          );
          const lengths = Array.from({ length: batch }, () => 1 + Math.floor(next() * length));
          const budgets = lengths.map(() => [1, 0.75, 0.5, 0.25][Math.floor(next() * 4)]!);
          const visible = evictionVisibility(
            scores,
            lengths,
            budgets,
            { outputs, length },
            {
              sinks,
              window,
            },
          );
          lengths.forEach((n, b) => {
            const selected = Math.floor(budgets[b]! * n) - sinks - window;
            for (let o = 0; o < outputs; o++) {
              const offset = (b * outputs + o) * length;
              const own = Array.from(scores.subarray(offset, offset + n));
              const held =
                selected < 1
                  ? own.map((_, t) => new Set(own.map((__, j) => j).filter((j) => j <= t)))
                  : simulateCache(own, sinks, window, selected);
              for (let t = 0; t < length; t++) {
                for (let j = 0; j < length; j++) {
                  const expected = t >= n || j >= n || j > t || held[t]!.has(j) ? 1 : 0;
                  expect(visible[(offset + t) * length + j], `b${b} o${o} t${t} j${j}`).toBe(
                    expected,
                  );
                }
              }
            }
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps the older of two equal scores, as every Lethe selection does', () => {
    // one sink, no window, one selected slot: rows 2+ choose between entries 1 and 2 (equal)
    const scores = new Float32Array([0, 5, 5, -1]);
    const visible = evictionVisibility(
      scores,
      [4],
      [0.5],
      { outputs: 1, length: 4 },
      {
        sinks: 1,
        window: 0,
      },
    );
    expect(Array.from(visible.subarray(12, 16))).toEqual([1, 1, 0, 0]);
  });
});
