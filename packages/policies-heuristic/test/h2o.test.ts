import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { H2OPolicy } from '../src/index';
import { keptOf, NO_RANDOM, observation, perHead } from './observation';

/** One KV head shared by 2 query heads; 5 entries. */
function h2oObservation(accumulated: number[], counts: number[]) {
  return {
    ...observation([[0, 1, 2, 3, 4]], { queryHeads: 2 }),
    accumulatedAttention: perHead([accumulated], 5),
    attentionCounts: perHead([counts], 5),
  };
}

describe('H2OPolicy', () => {
  it('scores the mean attention per observing query, averaged over the group', () => {
    const obs = h2oObservation([4, 1.2, 0.6, 0.4, 0.5], [5, 4, 3, 2, 1]);
    const scores = new H2OPolicy({ budget: { keepCount: 2 } }).score(obs);
    const want = [4 / 10, 1.2 / 8, 0.6 / 6, 0.4 / 4, 0.5 / 2];
    want.forEach((w, i) => {
      expect(scores[i]).toBeCloseTo(w, 6);
    });
  });

  it('keeps the keys with the highest mean attention, not the highest sum', () => {
    // Entry 0 has the largest sum only because it was seen by many queries.
    const obs = h2oObservation([3, 0.2, 1.8, 0.1, 0.9], [10, 8, 4, 2, 1]);
    const mean = new H2OPolicy({ budget: { keepCount: 2 } });
    expect(keptOf(mean.select(obs, NO_RANDOM))).toEqual([2, 4]);
    const sum = new H2OPolicy({ budget: { keepCount: 2 }, statistic: 'sum' });
    expect(keptOf(sum.select(obs, NO_RANDOM))).toEqual([0, 2]);
  });

  it('never evicts an entry no query has seen yet', () => {
    const obs = h2oObservation([2, 1, 0.5, 0.2, 0], [4, 4, 4, 4, 0]);
    expect(keptOf(new H2OPolicy({ budget: { keepCount: 2 } }).select(obs, NO_RANDOM))).toEqual([
      0, 4,
    ]);
  });

  it('declares and checks its needs', () => {
    const policy = new H2OPolicy({ budget: { keepCount: 2 } });
    expect(policy.needs.accumulatedAttention).toBe(true);
    expectLetheError(
      () => policy.select(observation([[0, 1, 2]]), NO_RANDOM),
      'E_ARG',
      'observation.accumulatedAttention',
    );
    expectLetheError(
      () => new H2OPolicy({ budget: { keepCount: 2 }, statistic: 'max' as 'sum' }),
      'E_ARG',
      'statistic',
    );
  });
});
