import { describe, expect, it } from 'vitest';
import { cacheGeometry, KVCache } from '../src/index';
import { appendTokens, keyAt, smallCache } from './helpers';

/** Token indices (append order) of the live entries of `head` in a view; test positions are 3 + 2·index. */
function liveTokens(cache: KVCache, layer: number, head = 0): number[] {
  const view = cache.view(layer);
  return Array.from(
    view.positions.subarray(head * view.maxLive, head * view.maxLive + view.liveCounts[head]),
    (p) => (p - 3) / 2,
  );
}

describe('KVCache basics', () => {
  it('runs the README example', () => {
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2 }),
      queryHeads: 1,
    });
    cache.append(
      0,
      new Float32Array([1, 0, 0, 1]),
      new Float32Array([1, 1, 2, 2]),
      new Int32Array([0, 1]),
    );
    cache.keep(0, { granularity: 'layer', keep: new Int32Array([1]) });
    const view = cache.view(0);
    expect(Array.from(view.positions)).toEqual([1]);
    expect(Array.from(view.keys)).toEqual([0, 1]);
    expect(Array.from(view.values!)).toEqual([2, 2]);
    expect(Array.from(cache.replayMask(0))).toEqual([1, 0, 1, 1]);
    cache.append(0, new Float32Array([5, 5]), new Float32Array([6, 6]), new Int32Array([2]));
    // token 2 never saw token 0
    expect(Array.from(cache.replayMask(0))).toEqual([1, 0, 0, 1, 1, 0, 0, 1, 1]);
  });

  it('keeps anchors whatever the decision says', () => {
    // Sinks are positions below 6: tokens 0 and 1 (positions 3 and 5).
    const cache = smallCache({ layers: 1, kvHeads: 1, anchors: { sinks: 6, window: 2 } });
    appendTokens(cache, 0, 0, 10);
    cache.keep(0, { granularity: 'layer', keep: new Int32Array([5]) });
    expect(liveTokens(cache, 0)).toEqual([0, 1, 5, 8, 9]);
    appendTokens(cache, 0, 10, 3);
    // live entries: 0 1 5 8 9 10 11 12 -> keep index 2 (token 5); window = tokens 11, 12
    cache.keep(0, { granularity: 'layer', keep: new Int32Array([2]) });
    expect(liveTokens(cache, 0)).toEqual([0, 1, 5, 11, 12]);
  });

  it('keepBlocks keeps whole runs of live entries, the last block possibly short', () => {
    const cache = smallCache({ layers: 1, kvHeads: 2 });
    appendTokens(cache, 0, 0, 11);
    cache.keepBlocks(0, 1, new Int32Array([3, 0]), 3); // blocks [0..2] and [9..10]
    expect(liveTokens(cache, 0, 0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(liveTokens(cache, 0, 1)).toEqual([0, 1, 2, 9, 10]);
    cache.keepBlocks(0, 1, new Int32Array([1]), 2); // entries 2, 3 -> tokens 2, 9
    expect(liveTokens(cache, 0, 1)).toEqual([2, 9]);
    expect(Array.from(cache.stats().evictionRounds)).toEqual([2]);
  });

  it('pads views per head and reuses its buffers across calls', () => {
    const cache = smallCache({ layers: 1, kvHeads: 2, headDim: 2 });
    appendTokens(cache, 0, 0, 5);
    cache.keep(0, {
      granularity: 'head',
      keep: [new Int32Array([0, 1, 2, 3, 4]), new Int32Array([4])],
    });
    const view = cache.view(0);
    expect(view.maxLive).toBe(5);
    expect(Array.from(view.liveCounts)).toEqual([5, 1]);
    expect(Array.from(view.positions.subarray(5))).toEqual([11, -1, -1, -1, -1]);
    expect(Array.from(view.keys.subarray(12))).toEqual(new Array(8).fill(0));
    expect(view.keys[10]).toBe(keyAt(0, 4, 1, 0));
    const again = cache.view(0);
    expect(again.keys.buffer).toBe(view.keys.buffer);
    expect(again.keys).toEqual(view.keys);
  });

  it('stores no values when asked not to, and ignores the values argument', () => {
    const cache = smallCache({ layers: 1, storeValues: false });
    cache.append(0, new Float32Array(2 * 3), new Float32Array(0), new Int32Array([0]));
    expect(cache.view(0).values).toBeUndefined();
    // 2 heads × one page of 4 slots (key, position, stamp) + the page's key bounds (2 × 3 floats)
    expect(cache.stats().bytesAllocated).toBe(2 * (4 * (3 * 4 + 8) + 2 * 3 * 4));
  });

  it('advances layers independently and treats an empty append as a no-op', () => {
    const cache = smallCache({ layers: 2 });
    appendTokens(cache, 0, 0, 3);
    cache.append(1, new Float32Array(0), new Float32Array(0), new Int32Array(0));
    expect([cache.length(0), cache.length(1)]).toEqual([3, 0]);
    expect(Array.from(cache.liveCounts(0))).toEqual([3, 3]);
    expect(Array.from(cache.stats().livePerLayer)).toEqual([6, 0]);
    expect(cache.replayMask(1).length).toBe(0);
  });

  it('exposes its resolved options', () => {
    const cache = new KVCache({ geometry: { layers: 1, kvHeads: 2, headDim: 4 }, queryHeads: 6 });
    expect(cache.geometry).toEqual({ layers: 1, kvHeads: 2, headDim: 4, pageSize: 16 });
    expect(cache.anchors).toEqual({ sinks: 0, window: 0 });
    expect([
      cache.queryHeads,
      cache.storeValues,
      cache.storeGates,
      cache.queryWindow,
      cache.trackAttention,
      cache.trace,
    ]).toEqual([6, true, false, 0, false, true]);
  });
});
