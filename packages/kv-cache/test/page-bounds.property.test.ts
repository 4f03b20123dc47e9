import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KVCache, type LayerView } from '../src/index';
import { drive, optionsArb, workloadArb } from './driver';
import { appendTokens, smallCache } from './helpers';

/** Page bounds of head `h` recomputed by brute force from the packed view's keys. */
function bruteBounds(view: LayerView, h: number, pageSize: number) {
  const { headDim, maxLive } = view;
  const live = view.liveCounts[h];
  const pages = Math.ceil(live / pageSize);
  const min = new Float32Array(pages * headDim);
  const max = new Float32Array(pages * headDim);
  for (let p = 0; p < pages; p++) {
    for (let c = 0; c < headDim; c++) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let i = p * pageSize; i < Math.min(live, (p + 1) * pageSize); i++) {
        const k = view.keys[(h * maxLive + i) * headDim + c];
        lo = Math.min(lo, k);
        hi = Math.max(hi, k);
      }
      min[p * headDim + c] = lo;
      max[p * headDim + c] = hi;
    }
  }
  return { pages, min, max };
}

/** Every head's maintained bounds, and those of the observation, equal the brute force. */
function expectBoundsExact(cache: KVCache): void {
  const { layers, kvHeads, headDim, pageSize } = cache.geometry;
  for (let l = 0; l < layers; l++) {
    const view = cache.view(l);
    const observed = cache.observe(l, {
      attentionWindow: 0,
      accumulatedAttention: false,
      keys: false,
      values: false,
      hidden: false,
      pageKeyBounds: true,
    }).pageKeyBounds!;
    expect(observed.pageSize).toBe(pageSize);
    expect(observed.maxPages).toBe(Math.ceil(view.maxLive / pageSize));
    for (let h = 0; h < kvHeads; h++) {
      const expected = bruteBounds(view, h, pageSize);
      const bounds = cache.pageKeyBounds(l, h);
      expect(bounds.pages).toBe(expected.pages);
      expect(bounds.min).toEqual(expected.min);
      expect(bounds.max).toEqual(expected.max);
      const row = h * observed.maxPages * headDim;
      expect(observed.min.subarray(row, row + expected.min.length)).toEqual(expected.min);
      expect(observed.max.subarray(row, row + expected.max.length)).toEqual(expected.max);
    }
  }
}

describe('page key bounds maintained by KVCache', () => {
  it('equal the min / max of the live keys after random appends and keeps, clones and round trips', () => {
    fc.assert(
      fc.property(optionsArb, workloadArb, fc.integer(), (options, steps, seed) => {
        const cache = new KVCache(options);
        expectBoundsExact(cache);
        steps.forEach((step, i) => {
          drive(cache, [step], seed + i);
          expectBoundsExact(cache);
        });
        const copy = cache.clone();
        expectBoundsExact(copy);
        const restored = KVCache.deserialize(cache.serialize());
        expectBoundsExact(restored);
        // The copies maintain their bounds on their own from there on.
        drive(copy, steps, seed + 1);
        drive(restored, steps, seed + 2);
        expectBoundsExact(copy);
        expectBoundsExact(restored);
        expectBoundsExact(cache);
      }),
      { numRuns: 150 },
    );
  });
});

describe('KVCache.gather', () => {
  it('copies exactly the ranged entries of the packed view, straight from the pages', () => {
    fc.assert(
      fc.property(
        optionsArb,
        workloadArb,
        fc.integer(),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 3 }),
        (options, steps, seed, cuts, offset) => {
          const cache = new KVCache(options);
          drive(cache, steps, seed);
          const { layers, kvHeads, headDim } = cache.geometry;
          for (let l = 0; l < layers; l++) {
            const view = cache.view(l);
            for (let h = 0; h < kvHeads; h++) {
              const live = view.liveCounts[h];
              // sorted cut points inside [0, live] → alternate ranges
              const points = [...new Set(cuts.map((x) => x % (live + 1)))].sort((a, b) => a - b);
              const ranges = Int32Array.from(points.slice(0, points.length - (points.length % 2)));
              const entries: number[] = [];
              for (let r = 0; r < ranges.length; r += 2)
                for (let i = ranges[r]; i < ranges[r + 1]; i++) entries.push(i);
              const room = offset + entries.length + 1;
              const target = {
                keys: new Float32Array(room * headDim).fill(7),
                ...(cache.storeValues ? { values: new Float32Array(room * headDim) } : {}),
                ...(cache.storeGates ? { gates: new Float32Array(room) } : {}),
              };
              expect(cache.gather(l, h, ranges, target, offset)).toBe(entries.length);
              entries.forEach((i, j) => {
                const from = (h * view.maxLive + i) * headDim;
                const to = (offset + j) * headDim;
                expect(target.keys.subarray(to, to + headDim)).toEqual(
                  view.keys.subarray(from, from + headDim),
                );
                if (target.values) {
                  expect(target.values.subarray(to, to + headDim)).toEqual(
                    view.values!.subarray(from, from + headDim),
                  );
                }
                if (target.gates)
                  expect(target.gates[offset + j]).toBe(view.gates![h * view.maxLive + i]);
              });
              // nothing outside the written slots changes
              expect(Array.from(target.keys.subarray(0, offset * headDim))).toEqual(
                new Array(offset * headDim).fill(7),
              );
              expect(Array.from(target.keys.subarray((offset + entries.length) * headDim))).toEqual(
                new Array(headDim).fill(7),
              );
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('KVCache.gather and pageKeyBounds arguments', () => {
  it('refuse bad ranges, offsets, heads and targets, writing nothing', () => {
    const cache = smallCache({ layers: 1, kvHeads: 2, headDim: 3, pageSize: 4 });
    appendTokens(cache, 0, 0, 10);
    const keys = new Float32Array(12 * 3).fill(5);
    const gather =
      (ranges: Int32Array, target: object = { keys }, offset = 0, head = 0) =>
      () =>
        cache.gather(0, head, ranges, target as { keys: Float32Array }, offset);
    expectLetheError(gather([0, 2] as never), 'E_DTYPE', 'ranges');
    expectLetheError(gather(Int32Array.of(0, 2, 3)), 'E_SHAPE', 'ranges');
    expectLetheError(gather(Int32Array.of(3, 2)), 'E_ARG', 'ranges');
    expectLetheError(gather(Int32Array.of(0, 4, 3, 5)), 'E_ARG', 'ranges');
    expectLetheError(gather(Int32Array.of(0, 11)), 'E_ARG', 'ranges');
    expectLetheError(gather(Int32Array.of(0, 2), { keys }, -1), 'E_ARG', 'offset');
    expectLetheError(gather(Int32Array.of(0, 2), { keys }, 0, 2), 'E_ARG', 'head');
    expectLetheError(gather(Int32Array.of(0, 10), { keys }, 3), 'E_SHAPE', 'target.keys');
    expectLetheError(gather(Int32Array.of(0, 2), { keys: [] }), 'E_DTYPE', 'target.keys');
    expectLetheError(
      gather(Int32Array.of(0, 2), { keys, gates: new Float32Array(12) }),
      'E_STATE',
      'target.gates',
    );
    expect(Array.from(keys)).toEqual(new Array(36).fill(5));
    expect(cache.gather(0, 1, Int32Array.of(0, 10), { keys }, 2)).toBe(10);
    expectLetheError(() => cache.pageKeyBounds(0, 2), 'E_ARG', 'head');
    expectLetheError(() => cache.pageKeyBounds(1, 0), 'E_ARG', 'layer');
  });
});
