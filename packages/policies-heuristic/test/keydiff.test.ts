import { describe, expect, it } from 'vitest';
import { KeyDiffPolicy } from '../src/index';
import { keptOf, lcg, NO_RANDOM, observation, perEntry, range } from './observation';

function norm(v: number[]): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

/** Brute force: −cos(k, mean of k/‖k‖). */
function bruteKeyDiff(keys: number[][]): number[] {
  const dim = keys[0].length;
  const anchor = range(dim).map((c) => keys.reduce((s, k) => s + k[c] / norm(k), 0) / keys.length);
  return keys.map((k) => -k.reduce((s, x, c) => s + x * anchor[c], 0) / (norm(k) * norm(anchor)));
}

describe('KeyDiffPolicy', () => {
  it('matches −cos(k, mean normalised key) per head', () => {
    const random = lcg(3);
    const heads = range(2).map(() => range(9).map(() => range(4).map(() => random() * 2 - 1)));
    const obs = {
      ...observation([range(9), range(9)], { headDim: 4 }),
      keys: perEntry(heads, 9, 4),
    };
    const scores = new KeyDiffPolicy({ budget: { keepCount: 3 } }).score(obs);
    heads.forEach((keys, h) => {
      bruteKeyDiff(keys).forEach((w, i) => {
        expect(scores[h * 9 + i]).toBeCloseTo(w, 5);
      });
    });
  });

  it('prefers keys dissimilar from the mean, whatever their norm', () => {
    // Four keys point roughly along x (one of them long); entry 2 points along y.
    const keys = [
      [1, 0.05],
      [5, -0.1],
      [0, 0.3],
      [0.9, 0],
      [1.1, 0.1],
    ];
    const obs = { ...observation([range(5)], { headDim: 2 }), keys: perEntry([keys], 5, 2) };
    expect(keptOf(new KeyDiffPolicy({ budget: { keepCount: 1 } }).select(obs, NO_RANDOM))).toEqual([
      2,
    ]);
  });

  it('gives a zero key a finite score', () => {
    const obs = {
      ...observation([range(3)], { headDim: 2 }),
      keys: perEntry(
        [
          [
            [0, 0],
            [1, 0],
            [0, 1],
          ],
        ],
        3,
        2,
      ),
    };
    const scores = new KeyDiffPolicy({ budget: { keepCount: 1 } }).score(obs);
    expect(Math.abs(scores[0])).toBe(0);
    expect(Number.isFinite(scores[1]) && Number.isFinite(scores[2])).toBe(true);
  });
});
