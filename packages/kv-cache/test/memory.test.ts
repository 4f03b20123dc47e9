import { describe, expect, it } from 'vitest';
import { Page, pageByteLength, type SlotLayout } from '../src/cache/page';
import { cacheGeometry, KVCache } from '../src/index';
import { appendTokens, keyAt } from './helpers';

describe('paged storage and compaction', () => {
  it.each([
    [true, false, false, false],
    [true, true, false, false],
    [true, true, true, true],
    [true, false, true, true],
    [false, false, true, false],
  ])(
    'page byte length equals the bytes a page really holds (keys %s, values %s, gates %s, attention %s)',
    (storeKeys, storeValues, storeGates, trackAttention) => {
      const layout: SlotLayout = {
        pageSize: 5,
        headDim: 7,
        storeKeys,
        storeValues,
        storeGates,
        trackAttention,
      };
      const page = new Page(layout);
      const held = [
        page.keys,
        page.values,
        page.gates,
        page.positions,
        page.createdAt,
        page.attention,
        page.attentionCounts,
      ]
        .filter((array) => array !== undefined)
        .reduce((sum, array) => sum + array.byteLength, 0);
      // the page's key min and max, kept by PageBounds when it stores keys
      const bounds = storeKeys ? 2 * layout.headDim * 4 : 0;
      expect(pageByteLength(layout)).toBe(held + bounds);
    },
  );

  it.each([
    [false, false, false],
    [true, true, true],
    [false, true, true],
  ])(
    "a page's fields are disjoint views of one buffer, and a clone copies them all (values %s, gates %s, attention %s)",
    (storeValues, storeGates, trackAttention) => {
      const layout: SlotLayout = {
        pageSize: 3,
        headDim: 5,
        storeKeys: true,
        storeValues,
        storeGates,
        trackAttention,
      };
      const page = new Page(layout);
      const fields = [
        page.attention,
        page.keys,
        page.values,
        page.gates,
        page.positions,
        page.createdAt,
        page.attentionCounts,
      ].filter((array) => array !== undefined);
      expect(new Set(fields.map((array) => array.buffer)).size).toBe(1);
      fields.forEach((array, f) => {
        expect(array.byteOffset % array.BYTES_PER_ELEMENT).toBe(0);
        array.fill(f + 1);
      });
      const copy = page.clone(layout);
      fields.forEach((array, f) => {
        expect(Array.from(array)).toEqual(new Array(array.length).fill(f + 1)); // no overlap
      });
      const keyFill = fields.indexOf(page.keys) + 1;
      page.keys.fill(0);
      expect(Array.from(copy.keys)).toEqual(new Array(copy.keys.length).fill(keyFill)); // deep
      expect(copy.positions).toEqual(page.positions);
    },
  );

  it('releases pages when entries are evicted and keeps the survivors intact', () => {
    const pageSize = 16;
    const headDim = 8;
    const kvHeads = 2;
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads, headDim, pageSize }),
      queryHeads: kvHeads,
    });
    for (let t = 0; t < 200; t++) appendTokens(cache, 0, t, 1);
    const slotBytes = 2 * 4 * headDim + 8; // key + value + position + stamp
    const pageBytes = pageSize * slotBytes + 2 * 4 * headDim; // + the page's key bounds
    const before = cache.stats();
    expect(before.pagesAllocated).toBe(kvHeads * Math.ceil(200 / pageSize));
    expect(before.bytesAllocated).toBe(before.pagesAllocated * pageBytes);

    const keep = Int32Array.from({ length: 10 }, (_, i) => i * 19);
    cache.keep(0, { granularity: 'layer', keep });
    const after = cache.stats();
    expect(after.pagesAllocated).toBe(kvHeads * 1);
    expect(after.bytesAllocated).toBe(kvHeads * pageBytes);
    expect(after.bytesAllocated).toBeLessThan(before.bytesAllocated / 10);
    expect(after.bytesLive).toBe(kvHeads * 10 * slotBytes);
    expect(after.peakPerLayer[0]).toBe(kvHeads * 200);

    const view = cache.view(0);
    expect(view.maxLive).toBe(10);
    for (let h = 0; h < kvHeads; h++) {
      for (let i = 0; i < 10; i++) {
        for (let c = 0; c < headDim; c++)
          expect(view.keys[(h * 10 + i) * headDim + c]).toBe(keyAt(0, keep[i], h, c));
      }
    }
    // Growing again after compaction reuses no stale data.
    for (let t = 200; t < 240; t++) appendTokens(cache, 0, t, 1);
    const regrown = cache.view(0);
    expect(regrown.maxLive).toBe(50);
    expect(regrown.keys[10 * headDim]).toBe(keyAt(0, 200, 0, 0));
    expect(cache.stats().pagesAllocated).toBe(kvHeads * Math.ceil(50 / pageSize));
  });

  it('evicting every non-anchor entry leaves only the anchors and their pages', () => {
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2, pageSize: 4 }),
      queryHeads: 1,
      anchors: { sinks: 6, window: 3 }, // sinks: positions 3 and 5 (tokens 0, 1)
    });
    appendTokens(cache, 0, 0, 40);
    cache.keep(0, { granularity: 'layer', keep: new Int32Array(0) });
    expect(Array.from(cache.view(0).positions, (p) => (p - 3) / 2)).toEqual([0, 1, 37, 38, 39]);
    expect(cache.stats().pagesAllocated).toBe(2);
  });
});
