import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { KNormPolicy, L2NormPolicy } from '../src/index';
import { keptOf, NO_RANDOM, observation, perEntry } from './observation';

const KEYS = [
  [3, 4],
  [0.6, 0.8],
  [-1, 0],
  [0, -2],
  [0.3, -0.4],
];

function knormObservation() {
  return { ...observation([[0, 1, 2, 3, 4]], { headDim: 2 }), keys: perEntry([KEYS], 5, 2) };
}

describe('KNormPolicy', () => {
  it('scores −‖k‖ and keeps the keys with the smallest norms', () => {
    const policy = new KNormPolicy({ budget: { keepCount: 2 } });
    const scores = policy.score(knormObservation());
    [-5, -1, -1, -2, -0.5].forEach((w, i) => {
      expect(scores[i]).toBeCloseTo(w, 6);
    });
    // Norms 5, 1, 1, 2, 0.5: keep 0.5 and the older of the two 1s.
    expect(keptOf(policy.select(knormObservation(), NO_RANDOM))).toEqual([1, 4]);
  });

  it('needs keys', () => {
    const policy = new KNormPolicy({ budget: { keepCount: 2 } });
    expect(policy.needs.keys).toBe(true);
    expectLetheError(
      () => policy.select(observation([[0, 1, 2]]), NO_RANDOM),
      'E_ARG',
      'observation.keys',
    );
  });
});

describe('L2NormPolicy', () => {
  it('is KNorm under the L2-norm paper’s name: low key norm is important', () => {
    const l2 = new L2NormPolicy({ budget: { keepCount: 3 } });
    const knorm = new KNormPolicy({ budget: { keepCount: 3 } });
    expect(l2.name).toBe('l2norm');
    expect(knorm.name).toBe('knorm');
    expect(l2.select(knormObservation(), NO_RANDOM)).toEqual(
      knorm.select(knormObservation(), NO_RANDOM),
    );
    expect(keptOf(l2.select(knormObservation(), NO_RANDOM))).toEqual([1, 2, 4]);
  });
});
