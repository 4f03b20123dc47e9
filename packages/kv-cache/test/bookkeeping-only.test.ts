import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KVCache, type KVCacheOptions, NO_NEEDS } from '../src/index';
import { optionsArb, workloadArb } from './driver';
import { mulberry32, tokenBatch } from './helpers';

/** Everything a bookkeeping-only cache still answers, for one layer. */
function bookkeeping(cache: KVCache, layer: number) {
  const observed = cache.observe(layer, NO_NEEDS);
  return {
    length: cache.length(layer),
    live: Array.from(cache.liveCounts(layer)),
    positions: Array.from(observed.positions),
    ages: Array.from(observed.ages),
    gates: observed.gates === undefined ? undefined : Array.from(observed.gates),
    recent: cache.recentQueries(layer, cache.queryWindow),
  };
}

describe('KVCache with storeKeys = false (the bookkeeping a device cache mirrors)', () => {
  it('keeps the same positions, ages, live sets, gates, query window and entry counts as a full cache through appends, keeps, block keeps and truncations (fast-check)', () => {
    fc.assert(
      fc.property(
        optionsArb.map((options) => ({ ...options, trackAttention: false })),
        workloadArb,
        fc.integer({ min: 0, max: 3 }),
        fc.integer(),
        (options: KVCacheOptions, steps, cut, seed) => {
          const full = new KVCache(options);
          const lean = new KVCache({ ...options, storeKeys: false, storeValues: false });
          const random = mulberry32(seed);
          const pick = (live: number, fraction: number) =>
            Int32Array.from({ length: live }, (_, i) => i).filter(() => random() < fraction);
          for (const step of steps) {
            for (let l = 0; l < full.geometry.layers; l++) {
              const batch = tokenBatch(full, l, full.length(l), step.tokens);
              full.append(l, batch.keys, batch.values, batch.positions, batch.gates);
              // the keys and values are ignored: not even their lengths are read
              lean.append(
                l,
                new Float32Array(0),
                new Float32Array(0),
                batch.positions,
                batch.gates,
              );
              full.recordQueries(l, batch.queries, batch.positions);
              lean.recordQueries(l, batch.queries, batch.positions);
            }
            if (!step.evict) continue;
            for (let l = 0; l < full.geometry.layers; l++) {
              const live = full.liveCounts(l);
              const decision = step.perHead
                ? {
                    granularity: 'head' as const,
                    keep: Array.from(live, (n) => pick(n, step.keepFraction)),
                  }
                : undefined;
              if (decision !== undefined) {
                full.keep(l, decision);
                lean.keep(l, decision);
              } else {
                const blocks = pick(Math.ceil(live[0]! / 2), step.keepFraction);
                full.keepBlocks(l, 0, blocks, 2);
                lean.keepBlocks(l, 0, blocks, 2);
              }
            }
          }
          if (cut > 0 && options.trace === false) {
            const length = Math.max(0, full.length(0) - cut);
            const attempt = (cache: KVCache) => {
              try {
                cache.truncate(length);
                return undefined;
              } catch (error) {
                return (error as Error).message;
              }
            };
            // both truncate, or both refuse (a recent-window anchor evicted) with the same words
            expect(attempt(lean)).toBe(attempt(full));
          }
          for (let l = 0; l < full.geometry.layers; l++) {
            expect(bookkeeping(lean, l)).toEqual(bookkeeping(full, l));
          }
          const [a, b] = [full.stats(), lean.stats()];
          const { bytesAllocated: _a, bytesLive: _b, ...counts } = a;
          expect({ ...b, bytesAllocated: 0, bytesLive: 0 }).toEqual({
            ...counts,
            bytesAllocated: 0,
            bytesLive: 0,
          });
          // no key, no value, no page bounds held
          const { headDim, pageSize } = full.geometry;
          const vectors = (options.storeValues === false ? 1 : 2) * 4 * headDim;
          expect(a.bytesAllocated - b.bytesAllocated).toBe(
            a.pagesAllocated * (pageSize * vectors + 2 * 4 * headDim),
          );
        },
      ),
      { numRuns: 200, seed: 71 },
    );
  });

  it('refuses what reads keys, naming storeKeys or the need', () => {
    const options: KVCacheOptions = {
      geometry: { layers: 1, kvHeads: 1, headDim: 2, pageSize: 2 },
      queryHeads: 1,
      queryWindow: 2,
      storeKeys: false,
      storeValues: false,
    };
    const cache = new KVCache(options);
    cache.append(0, new Float32Array(0), new Float32Array(0), Int32Array.of(0, 1));
    expectLetheError(() => cache.view(0), 'E_STATE', 'storeKeys');
    expectLetheError(
      () => cache.gather(0, 0, Int32Array.of(0, 1), { keys: new Float32Array(4) }, 0),
      'E_STATE',
      'storeKeys',
    );
    expectLetheError(() => cache.pageKeyBounds(0, 0), 'E_STATE', 'storeKeys');
    expectLetheError(() => cache.serialize(), 'E_STATE', 'storeKeys');
    expectLetheError(() => cache.observe(0, { ...NO_NEEDS, keys: true }), 'E_STATE', 'needs.keys');
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, pageKeyBounds: true }),
      'E_STATE',
      'needs.pageKeyBounds',
    );
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, attentionWindow: 1 }),
      'E_STATE',
      'needs.attentionWindow',
    );
    expectLetheError(
      () => new KVCache({ ...options, trackAttention: true }),
      'E_ARG',
      'trackAttention',
    );
    expectLetheError(
      () => new KVCache({ ...options, storeKeys: 'no' as unknown as boolean }),
      'E_ARG',
      'storeKeys',
    );
    // a clone keeps the bookkeeping
    expect(Array.from(cache.clone().observe(0, NO_NEEDS).positions)).toEqual([0, 1]);
  });
});
