import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anchorMask, selectTopK, selectTopKRequired, topKIndices } from '../../src/selection/index';
import { anchorsArbitrary, bruteRank, isAnchored, rowArbitrary } from './helpers';

/** Brute force: anchors, then the best others by a full sort, up to k in total. */
function bruteTopK(
  scores: Float32Array,
  positions: Int32Array,
  anchors: { sinks: number; window: number },
  k: number,
): number[] {
  const all = [...scores.keys()];
  const anchored = all.filter((i) => isAnchored(positions, i, anchors));
  const others = bruteRank(
    scores,
    all.filter((i) => !isAnchored(positions, i, anchors)),
  );
  return [...anchored, ...others.slice(0, Math.max(0, k - anchored.length))].sort((a, b) => a - b);
}

describe('selectTopK', () => {
  it('equals anchors plus a brute-force sort of the rest', () => {
    fc.assert(
      fc.property(
        rowArbitrary(),
        anchorsArbitrary,
        fc.integer({ min: 0, max: 45 }),
        (row, anchors, k) => {
          const kept = selectTopK(row.scores, row.positions, anchors, k);
          expect([...kept]).toEqual(bruteTopK(row.scores, row.positions, anchors, k));
        },
      ),
    );
  });

  it('always includes anchors and keeps min(live, max(k, anchors)) entries', () => {
    fc.assert(
      fc.property(
        rowArbitrary(),
        anchorsArbitrary,
        fc.integer({ min: 0, max: 45 }),
        (row, anchors, k) => {
          const kept = selectTopK(row.scores, row.positions, anchors, k);
          const live = row.scores.length;
          const mask = anchorMask(row.positions, anchors);
          const anchored = mask.reduce((n, f) => n + f, 0);
          expect(kept.length).toBe(Math.min(live, Math.max(k, anchored)));
          const keptSet = new Set(kept);
          for (let i = 0; i < live; i++) if (mask[i] === 1) expect(keptSet.has(i)).toBe(true);
          for (let i = 1; i < kept.length; i++) expect(kept[i]).toBeGreaterThan(kept[i - 1]);
        },
      ),
    );
  });

  it('anchors sinks by position and the window by recency', () => {
    const positions = Int32Array.from([0, 1, 5, 6, 7, 9]);
    expect([...anchorMask(positions, { sinks: 2, window: 1 })]).toEqual([1, 1, 0, 0, 0, 1]);
    // After the first two positions were evicted, no entry is a sink any more.
    expect([...anchorMask(Int32Array.from([3, 4, 8]), { sinks: 2, window: 0 })]).toEqual([0, 0, 0]);
  });

  it('breaks ties towards the lower index', () => {
    const scores = Float32Array.from([1, 2, 2, 1, 2]);
    expect([...selectTopKRequired(scores, new Uint8Array(5), 2)]).toEqual([1, 2]);
    expect([...selectTopKRequired(scores, new Uint8Array(5), 4)]).toEqual([0, 1, 2, 4]);
  });

  it('rejects NaN scores with E_ARG naming `scores`', () => {
    const scores = Float32Array.from([0.1, Number.NaN, 0.3]);
    expectLetheError(
      () => selectTopK(scores, Int32Array.from([0, 1, 2]), { sinks: 0, window: 0 }, 2),
      'E_ARG',
      'scores',
    );
  });

  it('rejects a negative or fractional k and mismatched lengths', () => {
    const scores = Float32Array.from([1, 2]);
    const positions = Int32Array.from([0, 1]);
    expectLetheError(
      () => selectTopK(scores, positions, { sinks: 0, window: 0 }, -1),
      'E_ARG',
      'k',
    );
    expectLetheError(
      () => selectTopK(scores, positions, { sinks: 0, window: 0 }, 1.5),
      'E_ARG',
      'k',
    );
    expectLetheError(
      () => selectTopK(scores, Int32Array.from([0]), { sinks: 0, window: 0 }, 1),
      'E_SHAPE',
      'positions',
    );
    expectLetheError(
      () => selectTopK(scores, positions, { sinks: -1, window: 0 }, 1),
      'E_ARG',
      'anchors.sinks',
    );
  });
});

describe('topKIndices', () => {
  it('equals selectTopKRequired with nothing required, ties (and ±0) to the lower index', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(-1, -0, 0, 0.5, 2, 7), { maxLength: 30 }),
        fc.array(fc.float({ noNaN: true }), { maxLength: 30 }),
        fc.nat(),
        (tied, spread, pick) => {
          for (const values of [tied, spread]) {
            const scores = Float32Array.from(values);
            const k = pick % (scores.length + 1);
            expect(topKIndices(scores, k)).toEqual(
              selectTopKRequired(scores, new Uint8Array(scores.length), k),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('equals selectTopKRequired on rows as long as a read scores (many ties, runs, sorted rows)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 700 }),
        fc.constantFrom('spread', 'ties', 'ascending', 'descending', 'constant'),
        fc.nat(),
        fc.integer(),
        (n, shape, pick, seed) => {
          let state = seed >>> 0;
          const next = () => {
            state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
            return state / 2 ** 32;
          };
          const scores = Float32Array.from({ length: n }, (_, i) => {
            if (shape === 'spread') return next() * 8 - 4;
            if (shape === 'ties') return [-1, -0, 0, 0.5, 2][Math.floor(next() * 5)]!;
            if (shape === 'ascending') return i;
            if (shape === 'descending') return -i;
            return 3;
          });
          const k = pick % (n + 1);
          expect(Array.from(topKIndices(scores, k))).toEqual(
            Array.from(selectTopKRequired(scores, new Uint8Array(n), k)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
