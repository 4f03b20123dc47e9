import { Rng } from '@lethe/core';
import { describe, expect, it } from 'vitest';
import { RandomPolicy } from '../src/index';
import { observation, range } from './observation';

describe('RandomPolicy', () => {
  const obs = observation([range(40), range(30)]);
  const policy = new RandomPolicy({ budget: { keepCount: 10 }, anchors: { sinks: 2, window: 2 } });

  it('scores with the uniforms of the RandomSource passed in', () => {
    expect([...policy.score(obs, new Rng(7))]).toEqual([...new Rng(7).uniform(2 * 40)]);
  });

  it('gives the same keep sets for the same seed and different ones for another', () => {
    const a = policy.select(obs, new Rng(1));
    expect(policy.select(obs, new Rng(1))).toEqual(a);
    expect(policy.select(obs, new Rng(2))).not.toEqual(a);
    if (a.granularity !== 'head') throw new Error('expected head decisions');
    for (const keep of a.keep) {
      expect(keep.length).toBe(10);
      expect([...keep]).toEqual(expect.arrayContaining([0, 1]));
    }
    expect([...a.keep[0]]).toEqual(expect.arrayContaining([38, 39]));
    expect([...a.keep[1]]).toEqual(expect.arrayContaining([28, 29]));
  });
});
