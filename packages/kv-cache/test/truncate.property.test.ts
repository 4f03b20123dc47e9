import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KVCache, type KVCacheOptions, type LayerView, type ObservationNeeds } from '../src/index';
import { headsAgree, optionsArb, type WorkloadStep, workloadArb } from './driver';
import { appendTokens, mulberry32, positionOf, smallCache } from './helpers';

/** Caches that can truncate: no accumulated attention, no visibility trace. */
const truncatableArb: fc.Arbitrary<KVCacheOptions> = optionsArb.map((options) => ({
  ...options,
  trackAttention: false,
  trace: false,
}));

/** One step as it ran: the tokens it appended and, after an eviction, each layer's survivors. */
interface LoggedStep {
  readonly from: number;
  readonly tokens: number;
  /** `[layer][head]`: the positions live after the step's eviction round, if it ran one. */
  readonly survivors?: number[][][];
}

/** Live positions per head of `layer`. */
function livePositions(cache: KVCache, layer: number): number[][] {
  const view = cache.view(layer);
  return Array.from({ length: view.kvHeads }, (_, h) =>
    Array.from(view.positions.subarray(h * view.maxLive, h * view.maxLive + view.liveCounts[h])),
  );
}

/**
 * Runs `steps` like the shared driver (appends with queries, random keeps of every kind) and logs
 * what each step appended and which positions survived its round.
 */
function driveLogged(cache: KVCache, steps: readonly WorkloadStep[], seed: number): LoggedStep[] {
  const random = mulberry32(seed);
  const pick = (live: number, fraction: number): Int32Array =>
    Int32Array.from({ length: live }, (_, i) => i).filter(() => random() < fraction);
  const { layers } = cache.geometry;
  return steps.map((step) => {
    const from = cache.length(0);
    for (let l = 0; l < layers; l++) appendTokens(cache, l, from, step.tokens, true);
    if (!step.evict) return { from, tokens: step.tokens };
    for (let l = 0; l < layers; l++) {
      const live = cache.liveCounts(l);
      if (step.perHead) {
        cache.keep(l, {
          granularity: 'head',
          keep: Array.from(live, (n) => pick(n, step.keepFraction)),
        });
      } else if (headsAgree(cache, l)) {
        cache.keep(l, { granularity: 'layer', keep: pick(live[0], step.keepFraction) });
      } else {
        cache.keepBlocks(l, 0, pick(Math.ceil(live[0] / 2), step.keepFraction), 2);
      }
    }
    const survivors = Array.from({ length: layers }, (_, l) => livePositions(cache, l));
    return { from, tokens: step.tokens, survivors };
  });
}

/**
 * The cache the same operations build without the tokens from append index `length` on: the
 * same appends cut at `length`, and every round keeping what survived in the original. (Its own
 * anchors add nothing: its sinks are the original's, and whenever a round ran after token
 * `length − 1` was appended its recent window is the last tokens before `length`, which a
 * truncation that is not refused finds live in the original, so they survived every round.)
 */
function rebuildWithout(options: KVCacheOptions, log: readonly LoggedStep[], length: number) {
  const reference = new KVCache(options);
  const { layers } = reference.geometry;
  for (const step of log) {
    const tokens = Math.max(0, Math.min(step.tokens, length - step.from));
    if (tokens > 0)
      for (let l = 0; l < layers; l++) appendTokens(reference, l, step.from, tokens, true);
    if (!step.survivors) continue;
    for (let l = 0; l < layers; l++) {
      const keep = livePositions(reference, l).map((positions, h) => {
        const kept = new Set(step.survivors![l][h]);
        return Int32Array.from(positions.flatMap((position, i) => (kept.has(position) ? [i] : [])));
      });
      reference.keep(l, { granularity: 'head', keep });
    }
  }
  return reference;
}

/** Page bounds of head `h` by brute force from a packed view. */
function bruteBounds(view: LayerView, h: number, pageSize: number) {
  const { headDim, maxLive } = view;
  const live = view.liveCounts[h];
  const pages = Math.ceil(live / pageSize);
  const min = new Float32Array(pages * headDim).fill(Number.POSITIVE_INFINITY);
  const max = new Float32Array(pages * headDim).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < live; i++) {
    const row = Math.floor(i / pageSize) * headDim;
    for (let c = 0; c < headDim; c++) {
      const k = view.keys[(h * maxLive + i) * headDim + c];
      min[row + c] = Math.min(min[row + c], k);
      max[row + c] = Math.max(max[row + c], k);
    }
  }
  return { pages, min, max };
}

const AGES: ObservationNeeds = {
  attentionWindow: 0,
  accumulatedAttention: false,
  keys: false,
  values: false,
  hidden: false,
};

/** `cache` holds exactly what `reference` holds (and its page bounds are the brute force's). */
function expectSameContent(cache: KVCache, reference: KVCache): void {
  const { layers, kvHeads, pageSize } = cache.geometry;
  for (let l = 0; l < layers; l++) {
    expect(cache.length(l)).toBe(reference.length(l));
    expect(cache.liveCounts(l)).toEqual(reference.liveCounts(l));
    const view = cache.view(l);
    const expected = reference.view(l);
    expect(view.positions).toEqual(expected.positions);
    expect(view.keys).toEqual(expected.keys);
    expect(view.values).toEqual(expected.values);
    expect(view.gates).toEqual(expected.gates);
    expect(cache.observe(l, AGES).ages).toEqual(reference.observe(l, AGES).ages);
    for (let h = 0; h < kvHeads; h++) {
      const bounds = cache.pageKeyBounds(l, h);
      const brute = bruteBounds(view, h, pageSize);
      expect(bounds.pages).toBe(brute.pages);
      expect(bounds.min).toEqual(brute.min);
      expect(bounds.max).toEqual(brute.max);
      expect(reference.pageKeyBounds(l, h).min).toEqual(brute.min);
    }
  }
  const stats = cache.stats();
  const expected = reference.stats();
  expect(stats.livePerHead).toEqual(expected.livePerHead);
  expect(stats.livePerLayer).toEqual(expected.livePerLayer);
  expect(stats.liveTotal).toBe(expected.liveTotal);
  expect(stats.pagesAllocated).toBe(expected.pagesAllocated);
  expect(stats.bytesAllocated).toBe(expected.bytesAllocated);
  expect(stats.bytesLive).toBe(expected.bytesLive);
  expect(stats.evictionRounds).toEqual(expected.evictionRounds);
}

/** The recorded queries of `cache` are the newest of those `reference` recorded. */
function expectQuerySuffix(cache: KVCache, reference: KVCache): void {
  const window = cache.queryWindow;
  if (window === 0) return;
  const needs = { ...AGES, attentionWindow: window };
  for (let l = 0; l < cache.geometry.layers; l++) {
    const held = cache.observe(l, needs).queries!;
    const all = reference.observe(l, needs).queries!;
    expect(held.length).toBeLessThanOrEqual(all.length);
    expect(held).toEqual(all.subarray(all.length - held.length));
  }
}

describe('KVCache.truncate', () => {
  it('leaves the cache that the same appends and keeps build without the forgotten tokens', () => {
    fc.assert(
      fc.property(
        truncatableArb,
        workloadArb,
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 6 }),
        (options, steps, seed, cutFraction, more) => {
          const cache = new KVCache(options);
          const log = driveLogged(cache, steps, seed);
          const length = Math.floor(cutFraction * cache.length(0));
          const peaks = cache.stats();
          const window = cache.anchors.window;
          const lostAnchor = Array.from({ length: cache.geometry.layers }, (_, l) =>
            livePositions(cache, l),
          ).some((heads) =>
            heads.some((positions) =>
              Array.from({ length: Math.min(window, length) }, (_, k) => length - 1 - k).some(
                (token) => !positions.includes(positionOf(token)),
              ),
            ),
          );
          if (lostAnchor) {
            // A token that would join the recent window was evicted: refused, nothing changes.
            const before = cache.serialize();
            expectLetheError(() => cache.truncate(length), 'E_STATE', 'truncate');
            expect(cache.serialize()).toEqual(before);
            return;
          }
          cache.truncate(length);
          const reference = rebuildWithout(options, log, length);
          expectSameContent(cache, reference);
          expectQuerySuffix(cache, reference);
          // Peaks are history: unchanged by the truncation.
          expect(cache.stats().peakTotal).toBe(peaks.peakTotal);
          expect(cache.stats().peakPerLayer).toEqual(peaks.peakPerLayer);

          // The copies hold the same and go on like the original.
          const copy = cache.clone();
          const restored = KVCache.deserialize(cache.serialize());
          expectSameContent(copy, reference);
          expectSameContent(restored, reference);
          expect(restored.stats().peakTotal).toBe(peaks.peakTotal);

          // Appending (and recording queries) continues from `length` in all of them.
          const next = [{ tokens: more, evict: more % 2 === 1, keepFraction: 0.5, perHead: true }];
          for (const target of [cache, copy, restored, reference]) {
            if (more > 0) driveLogged(target, next, seed + 1);
            expect(target.length(0)).toBe(length + more);
          }
          expectSameContent(cache, reference);
          expectQuerySuffix(cache, reference);
          expectSameContent(copy, cache);
          expectSameContent(restored, cache);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('to the current length changes nothing, and truncate(0) empties every layer', () => {
    const cache = smallCache({ trace: false, queryWindow: 2 });
    for (let l = 0; l < 2; l++) appendTokens(cache, l, 0, 9, true);
    const before = cache.serialize();
    cache.truncate(9);
    expect(cache.serialize()).toEqual(before);
    cache.truncate(0);
    const stats = cache.stats();
    expect(stats.liveTotal).toBe(0);
    expect(stats.pagesAllocated).toBe(0);
    expect(stats.bytesAllocated).toBe(0);
    expect(stats.peakTotal).toBe(2 * 2 * 9);
    expect(cache.length(1)).toBe(0);
    expect(cache.observe(0, { ...AGES, attentionWindow: 2 }).window).toBe(0);
    // positions may start over
    appendTokens(cache, 0, 0, 3, true);
    expect(cache.view(0).positions).toEqual(Int32Array.of(3, 5, 7, 3, 5, 7));
  });

  it('refuses a cache that tracks attention or keeps a trace, and a bad length, changing nothing', () => {
    const traced = smallCache();
    const tracking = smallCache({ trace: false, trackAttention: true, queryWindow: 1 });
    for (const cache of [traced, tracking]) {
      for (let l = 0; l < 2; l++) appendTokens(cache, l, 0, 5, true);
      const before = cache.serialize();
      expectLetheError(() => cache.truncate(2), 'E_STATE', 'truncate');
      expect(cache.serialize()).toEqual(before);
    }
    const cache = smallCache({ trace: false });
    for (let l = 0; l < 2; l++) appendTokens(cache, l, 0, 5);
    appendTokens(cache, 0, 5, 1); // layer 0 one token ahead: the shortest layer bounds `length`
    const before = cache.serialize();
    for (const bad of [-1, 1.5, Number.NaN, 6, '2' as unknown as number]) {
      expectLetheError(() => cache.truncate(bad), 'E_ARG', 'length');
    }
    expect(cache.serialize()).toEqual(before);
    cache.truncate(5);
    expect([cache.length(0), cache.length(1)]).toEqual([5, 5]);
  });

  it('refuses to leave an evicted token in the recent window', () => {
    const make = (keep: number[]) => {
      const cache = smallCache({
        layers: 1,
        kvHeads: 1,
        trace: false,
        anchors: { sinks: 0, window: 2 },
      });
      appendTokens(cache, 0, 0, 6);
      cache.keep(0, { granularity: 'layer', keep: Int32Array.from(keep) }); // + the window 4, 5
      return cache;
    };
    const cache = make([0, 2]); // tokens 1 and 3 evicted
    const before = cache.serialize();
    for (const length of [5, 4, 3, 2]) {
      expectLetheError(() => cache.truncate(length), 'E_STATE', 'truncate');
    }
    expect(cache.serialize()).toEqual(before);
    cache.truncate(1); // the window is token 0 alone, live
    expect(cache.view(0).positions).toEqual(Int32Array.of(positionOf(0)));
    const other = make([1, 2]);
    other.truncate(3); // the window 1, 2 survived
    expect(other.view(0).positions).toEqual(Int32Array.of(positionOf(1), positionOf(2)));
    expect(KVCache.deserialize(other.serialize()).view(0).positions).toEqual(
      other.view(0).positions,
    );
  });
});
