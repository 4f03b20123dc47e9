import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheGeometry, KVCache } from '../src/index';
import { appendTokens, mulberry32, randomSubset } from './helpers';

/**
 * NGC App. A.2 (Proposition 1): every δ appended tokens an eviction round keeps a (1 − ε)
 * fraction of each layer's entries; the pre-round size c_t follows c_{t+1} = (1 − ε) c_t + δ
 * and converges to δ / ε.
 *
 * Entries are whole, so a round must round. We evict floor(ε · live) entries, i.e. keep
 * live − floor(ε · live) = ceil((1 − ε) · live). The integer map f(c) = c − floor(ε c) + δ is
 * monotone; its fixed points satisfy δ/ε ≤ c < δ/ε + 1/ε, and from an empty cache (c_1 = δ ≤
 * every fixed point) the sizes climb to the smallest one, which is exactly δ/ε whenever δ/ε is an
 * integer (f(δ/ε) = δ/ε − δ + δ). Keeping floor((1 − ε) · live) instead has spurious fixed points below
 * δ/ε (δ = 8, ε = 0.25: floor(0.75 · 29) + 8 = 29), so the size would stall short of δ/ε.
 */
function runGrowThenEvict(
  delta: number,
  epsilon: number,
  rounds: number,
  layers: number,
  kvHeads: number,
): { sizes: number[][]; cache: KVCache } {
  const cache = new KVCache({
    geometry: cacheGeometry({ layers, kvHeads, headDim: 2, pageSize: 8 }),
    queryHeads: kvHeads,
  });
  const random = mulberry32(delta * 1000 + Math.round(epsilon * 64));
  const sizes: number[][] = Array.from({ length: layers }, () => []);
  for (let round = 0; round < rounds; round++) {
    for (let t = 0; t < delta; t++) {
      for (let l = 0; l < layers; l++) appendTokens(cache, l, cache.length(l), 1);
    }
    for (let l = 0; l < layers; l++) {
      const live = cache.liveCounts(l)[0];
      sizes[l].push(live);
      const kept = live - Math.floor(epsilon * live);
      cache.keep(l, { granularity: 'layer', keep: randomSubset(random, live, kept) });
    }
  }
  return { sizes, cache };
}

/** One round of the integer recursion: evict floor(ε c), then grow by δ. */
function step(size: number, delta: number, epsilon: number): number {
  return size - Math.floor(epsilon * size) + delta;
}

/** The integer recursion of the pre-round size, starting from an empty cache. */
function recursion(delta: number, epsilon: number, rounds: number): number[] {
  const sizes = [delta];
  while (sizes.length < rounds) sizes.push(step(sizes[sizes.length - 1], delta, epsilon));
  return sizes;
}

describe('grow-then-evict steady state (NGC App. A.2)', () => {
  it.each([
    [8, 0.25, 32],
    [16, 0.5, 32],
    [4, 0.5, 8],
    [10, 1, 10],
    [6, 0.75, 8],
    [12, 0.375, 32],
    [5, 0.2, 25],
  ])(
    'δ = %i, ε = %f: pre-round size converges to δ/ε = %i in every layer',
    (delta, epsilon, limit) => {
      const rounds = 80;
      const layers = 2;
      const kvHeads = 2;
      const { sizes, cache } = runGrowThenEvict(delta, epsilon, rounds, layers, kvHeads);
      for (const layerSizes of sizes) {
        expect(layerSizes).toEqual(recursion(delta, epsilon, rounds));
        expect(layerSizes.slice(-10)).toEqual(new Array(10).fill(limit));
      }
      const stats = cache.stats();
      // livePerLayer sums over KV heads; the peak is the pre-round maximum, reached at the fixed point.
      expect(Array.from(stats.peakPerLayer)).toEqual(new Array(layers).fill(kvHeads * limit));
      expect(stats.peakTotal).toBe(layers * kvHeads * limit);
      expect(Array.from(stats.evictionRounds)).toEqual(new Array(layers).fill(rounds));
    },
  );

  it('converges to a fixed point in [δ/ε, δ/ε + 1/ε) for any cadence and dyadic eviction rate', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 1, max: 8 }),
        (delta, eighths) => {
          const epsilon = eighths / 8;
          const rounds = 90;
          const { sizes } = runGrowThenEvict(delta, epsilon, rounds, 1, 1);
          const final = sizes[0][rounds - 1];
          expect(sizes[0]).toEqual(recursion(delta, epsilon, rounds));
          expect(step(final, delta, epsilon)).toBe(final);
          expect(final).toBeGreaterThanOrEqual(delta / epsilon);
          expect(final).toBeLessThan(delta / epsilon + 1 / epsilon);
        },
      ),
      { numRuns: 40 },
    );
  });
});
