import { KVCache, type KVCacheOptions } from '@lethe/kv-cache';
import { mulberry32 } from '@lethe/test-utils/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceKVCache, destroyGpuBuffer, liveGpuBuffers, readBack } from '../src/index';
import { compareRanked, decisive, hostReads } from './ranked-read';
import { referenceAttention } from './reference';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

/** What one step of the interleaving does to the cache it picks. */
type Operation =
  | { kind: 'append'; cache: number; tokens: number }
  | { kind: 'keep'; cache: number; fraction: number }
  | { kind: 'truncate'; cache: number; tokens: number }
  | { kind: 'replace'; cache: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    cache: fc.nat(2),
    tokens: fc.integer({ min: 1, max: 24 }),
  }),
  fc.record({
    kind: fc.constant('keep' as const),
    cache: fc.nat(2),
    fraction: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constant('truncate' as const),
    cache: fc.nat(2),
    tokens: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({ kind: fc.constant('replace' as const), cache: fc.nat(2) }),
);

const OPTIONS: KVCacheOptions = {
  geometry: { layers: 1, kvHeads: 2, headDim: 8, pageSize: 4 },
  queryHeads: 4,
  trace: false,
};

/** The device caches keep page bounds: every pool move must carry them too. */
const DEVICE_OPTIONS = { ...OPTIONS, pageBounds: true };

/**
 * Checks a device cache's page bounds through a ranked read: Quest's choice of half its pages
 * (at least one) for a random decode token, on the device and on the host twin. Skips a choice
 * a near-tie decides. Returns whether it checked.
 */
async function checkBounds(
  device: GPUDevice,
  cache: DeviceKVCache,
  host: KVCache,
  position: number,
  random: () => number,
): Promise<boolean> {
  const draw = () => Math.fround(random() * 4 - 2);
  const token = {
    queries: Float32Array.from({ length: 4 * 8 }, draw),
    queryPositions: Int32Array.of(position),
    chunk: {
      keys: Float32Array.from({ length: 2 * 8 }, draw),
      values: Float32Array.from({ length: 2 * 8 }, draw),
    },
  };
  const heads = Array.from(host.liveCounts(0), (live) => {
    const pages = Math.ceil(live / 4);
    return pages < 3 ? undefined : { sinks: 0, middleEnd: (pages - 1) * 4, pages: pages >> 1 };
  });
  const ranking = { reduce: 'max' as const, heads };
  if (heads.every((head) => head === undefined) || !decisive(host, ranking, token.queries)) {
    return false;
  }
  await compareRanked(device, cache, hostReads(host, ranking, token.queries), ranking, token);
  return true;
}

/** A device cache and its host twin, fed the same calls. */
interface Twin {
  device: DeviceKVCache;
  host: KVCache;
  length: number;
}

describe.skipIf(skipWebGpu)('shared page pools (SwiftShader)', () => {
  const block = deviceForBlock();

  it('keeps three caches on one pool exact through interleaved appends, evictions, truncations and replacements, and attends them in one launch (fast-check)', async () => {
    let truncations = 0;
    let bounded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.integer(),
        async (operations, seed) => {
          const random = mulberry32(seed);
          const draw = () => Math.fround(random() * 2 - 1);
          const make = (): Twin => ({
            device: new DeviceKVCache(DEVICE_OPTIONS, block.device),
            host: new KVCache(OPTIONS),
            length: 0,
          });
          const twins = [make(), make(), make()];
          try {
            for (const op of operations) {
              const twin = twins[op.cache]!;
              if (op.kind === 'append') {
                const width = op.tokens * 2 * 8;
                const keys = Float32Array.from({ length: width }, draw);
                const values = Float32Array.from({ length: width }, draw);
                const positions = Int32Array.from({ length: op.tokens }, (_, i) => twin.length + i);
                twin.device.append(0, keys, values, positions);
                twin.host.append(0, keys, values, positions);
                twin.length += op.tokens;
              } else if (op.kind === 'keep') {
                const decision = {
                  granularity: 'head' as const,
                  keep: Array.from(twin.host.liveCounts(0), (n) =>
                    Int32Array.from({ length: n }, (_, i) => i).filter(
                      () => random() < op.fraction,
                    ),
                  ),
                };
                twin.device.keep(0, decision);
                twin.host.keep(0, decision);
              } else if (op.kind === 'truncate') {
                const length = Math.max(0, twin.length - op.tokens);
                // the anchors' window may refuse a truncation: both caches must then agree
                let hostError: unknown;
                try {
                  twin.host.truncate(length);
                } catch (error) {
                  hostError = error;
                }
                if (hostError === undefined) {
                  twin.device.truncate(length);
                  twin.length = length;
                  truncations++;
                } else {
                  expect(() => twin.device.truncate(length)).toThrow();
                }
              } else {
                twin.device.dispose();
                twins[op.cache] = make();
              }
            }
            // every cache: the pages its live entries need, and its own attention in one launch
            for (const twin of twins) {
              const needed = Array.from(twin.host.liveCounts(0), (n) => Math.ceil(n / 4));
              expect(twin.device.stats().pagesAllocated).toBe(needed[0]! + needed[1]!);
              expect(twin.device.stats().livePerHead).toEqual(twin.host.stats().livePerHead);
            }
            const requests = twins.map((twin) => ({
              queries: Float32Array.from({ length: 4 * 8 }, () => 3 * draw()),
              queryPositions: Int32Array.of(Math.max(0, twin.length - 1)),
            }));
            const output = DeviceKVCache.attendBatch(
              0,
              twins.map((twin, i) => ({ cache: twin.device, request: requests[i]! })),
            );
            const out = new Float32Array(await readBack(block.device, output, 4 * 3 * 4 * 8));
            destroyGpuBuffer(output);
            twins.forEach((twin, i) => {
              const expected = referenceAttention(twin.host, 0, requests[i]!);
              out.subarray(i * 32, (i + 1) * 32).forEach((value, j) => {
                const error = Math.abs(value - expected.out[j]!);
                expect(error === 0 || error <= expected.tolerance[j]!).toBe(true);
              });
            });
            for (const twin of twins) {
              const at = twin.length;
              if (await checkBounds(block.device, twin.device, twin.host, at, random)) bounded++;
            }
          } finally {
            for (const twin of twins) twin.device.dispose();
          }
        },
      ),
      { numRuns: 60, seed: 0x5a },
    );
    expect(truncations).toBeGreaterThan(10);
    expect(bounded).toBeGreaterThan(20);
  }, 300_000);

  it('gives the pages of a burst back when its caches go, the others running on', async () => {
    const random = mulberry32(9);
    const fill = (cache: DeviceKVCache, host: KVCache | undefined, tokens: number) => {
      const width = tokens * 2 * 8;
      const keys = Float32Array.from({ length: width }, () => Math.fround(random() * 2 - 1));
      const values = Float32Array.from({ length: width }, () => Math.fround(random() * 2 - 1));
      const positions = Int32Array.from({ length: tokens }, (_, i) => i);
      cache.append(0, keys, values, positions);
      host?.append(0, keys, values, positions);
    };
    const before = liveGpuBuffers().bytes;
    const steady = new DeviceKVCache(DEVICE_OPTIONS, block.device);
    const host = new KVCache(OPTIONS);
    try {
      fill(steady, host, 37);
      const burst = Array.from(
        { length: 5 },
        () => new DeviceKVCache(DEVICE_OPTIONS, block.device),
      );
      for (const cache of burst) fill(cache, undefined, 400);
      const peak = liveGpuBuffers().bytes - before;
      for (const cache of burst) cache.dispose();
      const after = liveGpuBuffers().bytes - before;
      // 5 × 200 pages held at the peak, 20 (the steady cache's) after: the pool shrank
      expect(after).toBeLessThan(peak / 10);
      const request = {
        queries: Float32Array.from({ length: 4 * 8 }, () => Math.fround(random() * 4 - 2)),
        queryPositions: Int32Array.of(36),
      };
      const expected = referenceAttention(host, 0, request);
      const got = await steady.attendToHost(0, request);
      got.forEach((value, j) => {
        expect(Math.abs(value - expected.out[j]!)).toBeLessThanOrEqual(expected.tolerance[j]!);
      });
      expect(steady.stats().pagesAllocated).toBe(2 * Math.ceil(37 / 4));
      // the page bounds moved with the pages
      expect(await checkBounds(block.device, steady, host, 37, random)).toBe(true);
    } finally {
      steady.dispose();
    }
  });

  it('frees a pool with its last cache', () => {
    const before = liveGpuBuffers().buffers;
    const a = new DeviceKVCache(OPTIONS, block.device);
    const b = new DeviceKVCache(OPTIONS, block.device);
    expect(a.poolOf(0)).toBe(b.poolOf(0));
    const held = liveGpuBuffers().buffers;
    expect(held).toBeGreaterThan(before);
    a.dispose();
    expect(liveGpuBuffers().buffers).toBe(held);
    b.dispose();
    expect(liveGpuBuffers().buffers).toBe(before);
    const gated = new DeviceKVCache({ ...OPTIONS, storeGates: true }, block.device);
    const other = new DeviceKVCache(OPTIONS, block.device);
    expect(gated.poolOf(0)).not.toBe(other.poolOf(0));
    gated.dispose();
    other.dispose();
  });
});
