import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectAboveThreshold } from '../../src/selection/index';
import { anchorsArbitrary, isAnchored, rowArbitrary } from './helpers';

describe('selectAboveThreshold', () => {
  it('keeps exactly the anchors, the newest entry and the entries scoring at least the threshold', () => {
    fc.assert(
      fc.property(
        rowArbitrary(),
        anchorsArbitrary,
        fc.integer({ min: -5, max: 5 }),
        (row, anchors, t) => {
          const threshold = t / 4;
          const kept = selectAboveThreshold(row.scores, row.positions, anchors, threshold);
          const last = row.scores.length - 1;
          const want = [...row.scores.keys()].filter(
            (i) =>
              row.scores[i] >= threshold || isAnchored(row.positions, i, anchors) || i === last,
          );
          expect([...kept]).toEqual(want);
        },
      ),
    );
  });

  it('with a cap keeps the forced entries, then the best of the others above the threshold', () => {
    fc.assert(
      fc.property(
        rowArbitrary(),
        anchorsArbitrary,
        fc.integer({ min: -5, max: 5 }),
        fc.integer({ min: 0, max: 12 }),
        (row, anchors, t, cap) => {
          const threshold = t / 4;
          const kept = [
            ...selectAboveThreshold(row.scores, row.positions, anchors, threshold, cap),
          ];
          const last = row.scores.length - 1;
          const forced = [...row.scores.keys()].filter(
            (i) => isAnchored(row.positions, i, anchors) || i === last,
          );
          const eligible = [...row.scores.keys()]
            .filter((i) => !forced.includes(i) && row.scores[i] >= threshold)
            .sort((a, b) => row.scores[b] - row.scores[a] || a - b);
          const room = Math.max(0, cap - forced.length);
          const want = [...forced, ...eligible.slice(0, room)].sort((a, b) => a - b);
          expect(kept).toEqual(want);
        },
      ),
    );
  });

  it('keeps a score equal to the threshold (NAMM keeps score ≥ 0)', () => {
    const kept = selectAboveThreshold(
      Float32Array.from([-0.5, 0, 0.25, -1]),
      Int32Array.from([0, 1, 2, 3]),
      { sinks: 0, window: 0 },
      0,
    );
    expect([...kept]).toEqual([1, 2, 3]); // 3: the newest entry, always kept
  });

  it('rejects NaN scores and a non-finite threshold with E_ARG', () => {
    const positions = Int32Array.from([0, 1]);
    const anchors = { sinks: 0, window: 0 };
    expectLetheError(
      () => selectAboveThreshold(Float32Array.from([0, Number.NaN]), positions, anchors, 0),
      'E_ARG',
      'scores',
    );
    expectLetheError(
      () => selectAboveThreshold(new Float32Array(2), positions, anchors, Number.NaN),
      'E_ARG',
      'threshold',
    );
  });
});
