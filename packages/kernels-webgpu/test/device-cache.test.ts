import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KVCache } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  type DeviceAttentionRequest,
  DeviceKVCache,
  type DeviceKVCacheOptions,
  liveGpuBuffers,
} from '../src/index';
import { type ReferenceRequest, referenceAttention } from './reference';
import { deviceForBlock, ownDevice, skipWebGpu } from './webgpu-setup';

/** Entries of an 8k-token context: 64 splits of the attention pass per head. */
const LONG = 8192;

const options = (headDim = 64, kvHeads = 2, queryHeads = 8): DeviceKVCacheOptions => ({
  geometry: { layers: 2, kvHeads, headDim, pageSize: 16 },
  queryHeads,
  trace: false,
  // the reference reads the cache's own packed view
  hostKeys: true,
});

/** `n` floats of a smooth deterministic signal (independent of any RNG under test). */
const signal = (n: number, phase: number, scale = 1) =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * 0.37 + phase) * scale));

/** The cache's attention of `request` over layer 0, within the bound of float64 attention. */
async function expectReference(cache: DeviceKVCache, request: DeviceAttentionRequest) {
  const got = await cache.attendToHost(0, request);
  const expected = referenceAttention(cache, 0, request as ReferenceRequest);
  got.forEach((value, i) => {
    expect(Math.abs(value - expected.out[i]!)).toBeLessThanOrEqual(expected.tolerance[i]!);
  });
}

describe.skipIf(skipWebGpu)('DeviceKVCache: the contract on the device (SwiftShader)', () => {
  const block = deviceForBlock();

  it('attends over an 8k-token context (64 splits per head, GQA 4) and a sparse read of it', async () => {
    const cache = new DeviceKVCache(options(), block.device);
    try {
      const width = LONG * 2 * 64;
      cache.append(
        0,
        signal(width, 0, 2),
        signal(width, 1),
        Int32Array.from({ length: LONG }, (_, i) => i),
      );
      const queries = signal(8 * 64, 2, 2);
      const queryPositions = Int32Array.of(LONG - 1);
      for (const ranges of [
        undefined,
        [Int32Array.of(0, 4, 5000, 5100), Int32Array.of(8000, LONG)],
      ]) {
        const request = { queries, queryPositions, ...(ranges === undefined ? {} : { ranges }) };
        await expectReference(cache, request);
      }
    } finally {
      cache.dispose();
    }
  }, 120_000);

  it('reads every chunk token at the edges of splits (cache entries around multiples of 128)', async () => {
    for (const cached of [127, 128, 129, 255, 256]) {
      for (const tokens of [1, 2, 3]) {
        const cache = new DeviceKVCache(options(8), block.device);
        try {
          cache.append(
            0,
            signal(cached * 2 * 8, 0),
            signal(cached * 2 * 8, 1),
            Int32Array.from({ length: cached }, (_, i) => i),
          );
          const request = {
            queries: signal(tokens * 8 * 8, 2, 2),
            queryPositions: Int32Array.from({ length: tokens }, (_, i) => cached + i),
            chunk: { keys: signal(tokens * 2 * 8, 3, 2), values: signal(tokens * 2 * 8, 4) },
          };
          await expectReference(cache, request);
        } finally {
          cache.dispose();
        }
      }
    }
  });

  it('counts entries as KVCache does and holds the pages its live entries need', () => {
    const cache = new DeviceKVCache(options(32), block.device);
    const host = new KVCache(options(32));
    try {
      for (let t = 0; t < 40; t++) {
        for (let l = 0; l < 2; l++) {
          const keys = signal(2 * 32, t + l);
          const positions = Int32Array.of(t);
          cache.append(l, keys, keys, positions);
          host.append(l, keys, keys, positions);
        }
      }
      const decision = {
        granularity: 'head' as const,
        keep: [Int32Array.of(0, 5, 39), Int32Array.of(2)],
      };
      cache.keep(1, decision);
      host.keep(1, decision);
      const stats = cache.stats();
      const hostStats = host.stats();
      expect(stats.livePerHead).toEqual(hostStats.livePerHead);
      expect(stats.peakPerLayer).toEqual(hostStats.peakPerLayer);
      expect(stats.evictionRounds).toEqual(hostStats.evictionRounds);
      // layer 0: 40 entries per head (3 pages each); layer 1: 3 and 1 entries (1 page each)
      expect(stats.pagesAllocated).toBe(2 * 3 + 2);
      expect(stats.bytesLive).toBe(stats.liveTotal * 4 * (2 * 32 + 1));
      expect(stats.bytesAllocated).toBeGreaterThanOrEqual(8 * 16 * 4 * (2 * 32 + 1));
    } finally {
      cache.dispose();
    }
  });

  it('refuses geometry the kernels do not support, naming it', () => {
    expectLetheError(
      () => new DeviceKVCache(options(6, 1, 1), block.device),
      'E_SHAPE',
      'geometry.headDim',
    );
    expectLetheError(
      () => new DeviceKVCache(options(128, 1, 64), block.device),
      'E_SHAPE',
      'queryHeads',
    );
    expectLetheError(
      () => new DeviceKVCache({ ...options(), storeValues: false }, block.device),
      'E_ARG',
      'storeValues',
    );
  });

  it('names bad attention input and leaves no buffer behind', () => {
    const cache = new DeviceKVCache(options(16, 1, 2), block.device);
    try {
      cache.append(0, signal(3 * 16, 0), signal(3 * 16, 1), Int32Array.of(0, 1, 2));
      const before = liveGpuBuffers().buffers;
      const queries = signal(2 * 16, 3);
      const queryPositions = Int32Array.of(2);
      expectLetheError(
        () => cache.attend(0, { queries, queryPositions, ranges: [Int32Array.of(2, 1)] }),
        'E_ARG',
        'ranges[0]',
      );
      expectLetheError(
        () => cache.attend(0, { queries: signal(5, 0), queryPositions }),
        'E_SHAPE',
        'queries',
      );
      expectLetheError(
        () => cache.attend(0, { queries, queryPositions, liveBias: new Float32Array(2) }),
        'E_SHAPE',
        'liveBias',
      );
      expectLetheError(
        () =>
          cache.attend(0, {
            queries,
            queryPositions,
            chunk: { keys: signal(16, 0), values: signal(15, 0) },
          }),
        'E_SHAPE',
        'chunk.values',
      );
      expectLetheError(() => cache.attend(2, { queries, queryPositions }), 'E_ARG', 'layer');
      // the host cache's own checks run before the device is touched
      const bytes = cache.stats().bytesAllocated;
      expectLetheError(
        () =>
          cache.append(
            0,
            Float32Array.of(...signal(15, 0), Number.NaN),
            signal(16, 0),
            Int32Array.of(3),
          ),
        'E_ARG',
      );
      expect(cache.stats().bytesAllocated).toBe(bytes);
      expect(cache.length(0)).toBe(3);
      expect(liveGpuBuffers().buffers).toBe(before);
    } finally {
      cache.dispose();
    }
    expectLetheError(
      () => cache.append(0, signal(16, 0), signal(16, 0), Int32Array.of(3)),
      'E_STATE',
      'dispose',
    );
  });

  it('frees the buffers of a cache dropped without dispose() once it is collected', async () => {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const before = liveGpuBuffers().buffers;
    (() => {
      const cache = new DeviceKVCache(options(16, 1, 1), block.device);
      cache.append(0, signal(16, 0), signal(16, 1), Int32Array.of(0));
    })();
    expect(liveGpuBuffers().buffers).toBeGreaterThan(before);
    for (let round = 0; round < 20 && liveGpuBuffers().buffers > before; round++) {
      collect();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(liveGpuBuffers().buffers).toBe(before);
  });

  it('says the device was lost instead of computing on', async () => {
    const own = await ownDevice();
    const cache = new DeviceKVCache(options(16, 1, 1), own);
    cache.append(0, signal(16, 0), signal(16, 1), Int32Array.of(0));
    own.destroy();
    await own.lost;
    expectLetheError(
      () => cache.append(0, signal(16, 0), signal(16, 1), Int32Array.of(1)),
      'E_BACKEND',
      'device',
    );
    cache.dispose();
  });
});
