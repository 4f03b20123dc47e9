import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideKeep, meanOverHeads, selectTopK } from '../../src/selection/index';
import { observationFromRows, padRows, rowArbitrary } from './helpers';

const anchors = { sinks: 1, window: 1 };

describe('decideKeep', () => {
  it('selects each head on its own row at head granularity', () => {
    fc.assert(
      fc.property(
        fc.array(rowArbitrary(12), { minLength: 1, maxLength: 4 }),
        fc.nat(12),
        (rows, k) => {
          const observation = observationFromRows(rows.map((r) => r.positions));
          const scores = padRows(
            rows.map((r) => r.scores),
            observation.maxLive,
          );
          const decision = decideKeep(scores, observation, 'head', (s, p) =>
            selectTopK(s, p, anchors, k),
          );
          expect(decision.granularity).toBe('head');
          if (decision.granularity !== 'head') return;
          rows.forEach((row, h) => {
            expect([...decision.keep[h]]).toEqual([
              ...selectTopK(row.scores, row.positions, anchors, k),
            ]);
          });
        },
      ),
    );
  });

  it('averages aligned heads into one keep set at layer granularity', () => {
    const positions = Int32Array.from([0, 1, 2, 3]);
    const observation = observationFromRows([positions, positions]);
    // Head 0 prefers entry 1, head 1 prefers entry 2 more strongly: the mean prefers entry 2.
    const scores = Float32Array.from([0, 0.6, 0.1, 0, 0, 0.1, 0.9, 0]);
    expect([...meanOverHeads(scores, 2, 4, 4)].map((x) => Number(x.toFixed(5)))).toEqual([
      0, 0.35, 0.5, 0,
    ]);
    const decision = decideKeep(scores, observation, 'layer', (s, p) =>
      selectTopK(s, p, { sinks: 0, window: 0 }, 1),
    );
    // the decision carries the scores it was chosen from
    expect(decision).toEqual({ granularity: 'layer', keep: Int32Array.from([2]), scores });
  });

  it('rejects layer granularity on heads with different live sets (E_STATE)', () => {
    const select = (s: Float32Array, p: Int32Array) => selectTopK(s, p, anchors, 1);
    const ragged = observationFromRows([Int32Array.from([0, 1, 2]), Int32Array.from([0, 2])]);
    expectLetheError(() => decideKeep(new Float32Array(6), ragged, 'layer', select), 'E_STATE');
    const shifted = observationFromRows([Int32Array.from([0, 1]), Int32Array.from([0, 2])]);
    expectLetheError(() => decideKeep(new Float32Array(4), shifted, 'layer', select), 'E_STATE');
  });

  it('names NaN in a live entry and ignores padding', () => {
    const observation = observationFromRows([Int32Array.from([0, 1]), Int32Array.from([0])]);
    const select = (s: Float32Array, p: Int32Array) => selectTopK(s, p, anchors, 1);
    const padded = Float32Array.from([1, 2, 3, Number.NaN]);
    expect(decideKeep(padded, observation, 'head', select).granularity).toBe('head');
    const bad = Float32Array.from([1, Number.NaN, 3, 0]);
    expectLetheError(() => decideKeep(bad, observation, 'head', select), 'E_ARG', 'scores');
    expectLetheError(
      () => decideKeep(new Float32Array(3), observation, 'head', select),
      'E_SHAPE',
      'scores',
    );
  });
});
