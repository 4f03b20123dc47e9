import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetKeepCount, selectAdaKV, shareRoundedUp } from '../../src/selection/index';
import {
  anchorsArbitrary,
  bruteRank,
  isAnchored,
  observationFromRows,
  padRows,
  rowArbitrary,
} from './helpers';

const caseArbitrary = fc.record({
  rows: fc.array(rowArbitrary(20), { minLength: 1, maxLength: 4 }),
  anchors: anchorsArbitrary,
  keepRatio: fc.double({ min: 0.05, max: 1, noNaN: true }),
  safeguard: fc.double({ min: 0, max: 1, noNaN: true }),
});

describe('selectAdaKV', () => {
  it('keeps each head’s safeguard share and anchors, the rest globally best', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ rows, anchors, keepRatio, safeguard }) => {
        const observation = observationFromRows(rows.map((r) => r.positions));
        const scores = padRows(
          rows.map((r) => r.scores),
          observation.maxLive,
        );
        const quotas = Int32Array.from(rows, (r) =>
          budgetKeepCount({ keepRatio }, r.scores.length),
        );
        const keep = selectAdaKV(scores, observation, anchors, quotas, safeguard);

        // Brute force over the flattened (head, entry) list.
        const flat = rows.flatMap((r, h) => [...r.scores].map((score, i) => ({ h, i, score })));
        const required = new Set<number>();
        let flatIndex = 0;
        rows.forEach((row, h) => {
          const share = shareRoundedUp(safeguard, quotas[h]);
          const best = bruteRank(row.scores, [...row.scores.keys()]).slice(0, share);
          for (let i = 0; i < row.scores.length; i++) {
            if (best.includes(i) || isAnchored(row.positions, i, anchors))
              required.add(flatIndex + i);
          }
          flatIndex += row.scores.length;
        });
        const total = quotas.reduce((a, b) => a + b, 0);
        const others = bruteRank(
          flat.map((e) => e.score),
          [...flat.keys()].filter((j) => !required.has(j)),
        );
        const chosen = new Set([
          ...required,
          ...others.slice(0, Math.max(0, total - required.size)),
        ]);
        rows.forEach((row, h) => {
          const want = [...flat.keys()]
            .filter((j) => chosen.has(j) && flat[j].h === h)
            .map((j) => flat[j].i);
          expect([...keep[h]]).toEqual(want);
          // Minimum quota: at least ceil(safeguard · quota) entries per head.
          expect(keep[h].length).toBeGreaterThanOrEqual(
            Math.min(row.scores.length, shareRoundedUp(safeguard, quotas[h])),
          );
        });
        const kept = keep.reduce((n, k) => n + k.length, 0);
        expect(kept).toBe(Math.max(total, required.size));
      }),
    );
  });

  it('moves budget to the head with the sharper scores, down to the 20% floor', () => {
    // Head 0 has one dominant entry; head 1 has uniformly high scores. Quota 5 each, total 10.
    const positions = Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const observation = observationFromRows([positions, positions]);
    const scores = Float32Array.from([
      0.9, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
      0.5, 0.5, 0.5,
    ]);
    const keep = selectAdaKV(scores, observation, { sinks: 0, window: 0 }, Int32Array.from([5, 5]));
    expect([...keep[0]]).toEqual([0]);
    expect(keep[1].length).toBe(9);
  });

  it('validates quotas and safeguard', () => {
    const observation = observationFromRows([Int32Array.from([0, 1])]);
    const scores = new Float32Array(2);
    const anchors = { sinks: 0, window: 0 };
    expectLetheError(
      () => selectAdaKV(scores, observation, anchors, Int32Array.from([3])),
      'E_ARG',
      'quotas',
    );
    expectLetheError(
      () => selectAdaKV(scores, observation, anchors, Int32Array.from([1]), 1.5),
      'E_ARG',
      'safeguard',
    );
    expectLetheError(
      () => selectAdaKV(scores, observation, anchors, Int32Array.from([1, 1])),
      'E_SHAPE',
      'quotas',
    );
  });
});
