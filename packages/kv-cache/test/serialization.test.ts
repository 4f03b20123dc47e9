import { crc32 as zlibCrc32 } from 'node:zlib';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../src/cache/crc32';
import { CACHE_FORMAT_VERSION, cacheGeometry, KVCache } from '../src/index';
import { drive, optionsArb, workloadArb } from './driver';
import { appendTokens, mulberry32 } from './helpers';

/** Everything observable about a cache, as plain data. */
function snapshot(cache: KVCache): unknown {
  return Array.from({ length: cache.geometry.layers }, (_, l) => {
    const view = cache.view(l);
    return {
      length: cache.length(l),
      view: {
        ...view,
        positions: view.positions.slice(),
        keys: view.keys.slice(),
        values: view.values?.slice(),
        gates: view.gates?.slice(),
      },
      masks: cache.trace
        ? Array.from({ length: cache.geometry.kvHeads }, (_, h) => cache.replayMask(l, h))
        : undefined,
      observation: cache.observe(l, {
        attentionWindow: cache.queryWindow,
        accumulatedAttention: cache.trackAttention,
        keys: true,
        values: cache.storeValues,
        hidden: false,
      }),
      stats: cache.stats(),
    };
  });
}

function sampleCache(): KVCache {
  const cache = new KVCache({
    geometry: cacheGeometry({ layers: 2, kvHeads: 2, headDim: 3, pageSize: 2 }),
    queryHeads: 4,
    anchors: { sinks: 1, window: 1 },
    storeGates: true,
    trackAttention: true,
    queryWindow: 2,
  });
  drive(
    cache,
    [
      { tokens: 4, evict: true, keepFraction: 0.5, perHead: true },
      { tokens: 2, evict: true, keepFraction: 0.6, perHead: false },
      { tokens: 1, evict: false, keepFraction: 0, perHead: false },
    ],
    3,
  );
  return cache;
}

/** Rewrites the checksum so that only structural validation can catch a change. */
function resealed(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint32(12, zlibCrc32(copy.subarray(16)), true);
  return copy;
}

describe('serialize / deserialize', () => {
  it('round-trips any cache exactly, and both copies evolve identically', () => {
    fc.assert(
      fc.property(
        optionsArb,
        workloadArb,
        workloadArb,
        fc.integer(),
        (options, steps, more, seed) => {
          const original = new KVCache(options);
          drive(original, steps, seed);
          const bytes = original.serialize();
          const restored = KVCache.deserialize(bytes);
          expect(restored.serialize()).toEqual(bytes);
          expect(snapshot(restored)).toEqual(snapshot(original));
          drive(original, more, seed + 1);
          drive(restored, more, seed + 1);
          expect(snapshot(restored)).toEqual(snapshot(original));
          expect(restored.serialize()).toEqual(original.serialize());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('writes the magic and the format version', () => {
    const bytes = sampleCache().serialize();
    expect(String.fromCharCode(...bytes.subarray(0, 4))).toBe('LKVC');
    expect(new DataView(bytes.buffer).getUint32(4, true)).toBe(CACHE_FORMAT_VERSION);
    expect(new DataView(bytes.buffer).getUint32(8, true)).toBe(bytes.length - 16);
  });

  it('rejects every truncation with E_FORMAT', () => {
    const bytes = sampleCache().serialize();
    for (let cut = 0; cut < bytes.length; cut++) {
      expectLetheError(() => KVCache.deserialize(bytes.subarray(0, cut)), 'E_FORMAT', 'bytes');
    }
  });

  it('rejects every single-byte corruption and trailing garbage with E_FORMAT', () => {
    const bytes = sampleCache().serialize();
    const random = mulberry32(11);
    for (let i = 0; i < bytes.length; i++) {
      const corrupted = bytes.slice();
      corrupted[i] ^= 1 + Math.floor(random() * 255);
      expectLetheError(() => KVCache.deserialize(corrupted), 'E_FORMAT', 'bytes');
    }
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expectLetheError(() => KVCache.deserialize(longer), 'E_FORMAT', 'bytes');
  });

  it('rejects structurally inconsistent payloads even with a valid checksum', () => {
    const bytes = sampleCache().serialize();
    const view = (b: Uint8Array) => new DataView(b.buffer);
    // Layer 0's position log starts after the header (16), 10 option words (40) and its length (4).
    const repeatedPosition = bytes.slice();
    view(repeatedPosition).setInt32(64, view(bytes).getInt32(60, true), true);
    expectLetheError(() => KVCache.deserialize(resealed(repeatedPosition)), 'E_FORMAT', 'bytes');

    const unknownFlag = bytes.slice();
    view(unknownFlag).setUint32(16 + 32, 0x100, true);
    expectLetheError(() => KVCache.deserialize(resealed(unknownFlag)), 'E_FORMAT', 'bytes');

    const zeroHeads = bytes.slice();
    view(zeroHeads).setUint32(16 + 4, 0, true);
    expectLetheError(() => KVCache.deserialize(resealed(zeroHeads)), 'E_FORMAT', 'bytes');

    const lowPeak = bytes.slice();
    view(lowPeak).setUint32(16 + 36, 1, true);
    expectLetheError(() => KVCache.deserialize(resealed(lowPeak)), 'E_FORMAT', 'bytes');

    const otherVersion = bytes.slice();
    view(otherVersion).setUint32(4, CACHE_FORMAT_VERSION + 1, true);
    expectLetheError(() => KVCache.deserialize(otherVersion), 'E_FORMAT', 'bytes');

    expectLetheError(
      () => KVCache.deserialize([1, 2, 3] as unknown as Uint8Array),
      'E_ARG',
      'bytes',
    );
  });

  it('rejects a NaN key, a lost anchor and a trace that disagrees with the live set', () => {
    const make = (trace: boolean) => {
      const cache = new KVCache({
        geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 1, pageSize: 2 }),
        queryHeads: 1,
        trace,
      });
      appendTokens(cache, 0, 0, 3);
      return cache;
    };
    // Payload: 10 option words; layer: length, positions[3], lastQuery, rounds, peak,
    // [trace: evictedAt[3]], live, keys[live], values[live], positions[live], stamps[live].
    const layerAt = 16 + 40;
    const untraced = make(false);
    const bytes = untraced.serialize();
    const nanKey = bytes.slice();
    new DataView(nanKey.buffer).setFloat32(layerAt + 4 + 12 + 12 + 4 + 8, Number.NaN, true);
    expectLetheError(() => KVCache.deserialize(resealed(nanKey)), 'E_FORMAT', 'bytes');

    untraced.keep(0, { granularity: 'layer', keep: new Int32Array([1, 2]) }); // token 0 evicted
    const evicted = untraced.serialize();
    expect(KVCache.deserialize(evicted).length(0)).toBe(3);
    const claimsSink = evicted.slice();
    new DataView(claimsSink.buffer).setUint32(16 + 20, 4, true); // anchors.sinks = 4: position 3, token 0
    expectLetheError(() => KVCache.deserialize(resealed(claimsSink)), 'E_FORMAT', 'bytes');

    const traced = make(true);
    traced.keep(0, { granularity: 'layer', keep: new Int32Array([0, 2]) });
    const tracedBytes = traced.serialize();
    const evictedAt = layerAt + 4 + 12 + 12;
    expect(new DataView(tracedBytes.buffer).getInt32(evictedAt + 4, true)).toBe(3);
    const liveMarkedEvicted = tracedBytes.slice();
    new DataView(liveMarkedEvicted.buffer).setInt32(evictedAt + 8, 3, true);
    expectLetheError(() => KVCache.deserialize(resealed(liveMarkedEvicted)), 'E_FORMAT', 'bytes');
  });

  it('crc32 matches the IEEE reference', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    const random = mulberry32(5);
    const data = Uint8Array.from({ length: 1000 }, () => Math.floor(random() * 256));
    expect(crc32(data)).toBe(zlibCrc32(data));
  });
});

describe('clone()', () => {
  it('is deep: the copy evolves independently of the original', () => {
    fc.assert(
      fc.property(
        optionsArb,
        workloadArb,
        workloadArb,
        fc.integer(),
        (options, steps, more, seed) => {
          const original = new KVCache(options);
          drive(original, steps, seed);
          const before = snapshot(original);
          const copy = original.clone();
          expect(snapshot(copy)).toEqual(before);
          drive(copy, more, seed + 1);
          expect(snapshot(original)).toEqual(before);
          drive(original, more, seed + 1);
          expect(original.serialize()).toEqual(copy.serialize());
        },
      ),
      { numRuns: 40 },
    );
  });
});
