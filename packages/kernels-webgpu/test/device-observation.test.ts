import { type KVCacheOptions, NO_NEEDS } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceKVCache } from '../src/index';
import { checkObservation, NEEDS, type ObservationCase } from './observation-case';
import { deviceForBlock, ownDevice, skipWebGpu } from './webgpu-setup';

const caseArbitrary: fc.Arbitrary<ObservationCase> = fc.record({
  kvHeads: fc.constantFrom(1, 2, 3),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 16, 32, 64, 128),
  pageSize: fc.constantFrom(1, 4, 16, 64),
  queryWindow: fc.integer({ min: 1, max: 8 }),
  steps: fc.array(
    fc.record({
      tokens: fc.integer({ min: 1, max: 40 }),
      keep: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  spread: fc.constantFrom(0.5, 2, 6),
  seed: fc.integer(),
  gated: fc.boolean(),
});

describe.skipIf(skipWebGpu)(
  'DeviceKVCache: observations computed on the device (SwiftShader)',
  () => {
    const block = deviceForBlock();

    it('observes what KVCache observes: window attention and accumulated attention within float32 bounds, counts and bookkeeping exactly (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(caseArbitrary, async (c) => {
          const { worst, mismatches } = await checkObservation(block.device, c);
          expect(mismatches).toEqual([]);
          expect(worst).toBeLessThanOrEqual(1);
        }),
        { numRuns: 60, seed: 0x0b5e },
      );
    }, 300_000);

    it('accumulates over a long context (2,048 entries per head, rows 32 workgroup strides long)', async () => {
      const { worst, mismatches } = await checkObservation(block.device, {
        kvHeads: 2,
        group: 2,
        headDim: 32,
        pageSize: 16,
        queryWindow: 4,
        steps: [
          { tokens: 1024, keep: null },
          { tokens: 1024, keep: 0.75 },
          { tokens: 3, keep: null },
        ],
        spread: 2,
        seed: 7,
      });
      expect(mismatches).toEqual([]);
      expect(worst).toBeLessThanOrEqual(1);
    }, 300_000); // Its cost grows with queries × entries: at 4,096 entries it took 28 s alone on
    // SwiftShader here and 209 s beside the other packages' tests in CI; 2,048 keeps every row
    // 32 strides of a workgroup long at a quarter of the work.

    it('names what the device cache cannot serve synchronously or at all', async () => {
      const options: KVCacheOptions = {
        geometry: { layers: 1, kvHeads: 1, headDim: 4, pageSize: 4 },
        queryHeads: 1,
        queryWindow: 2,
        trackAttention: true,
        trace: false,
      };
      const tracked = new DeviceKVCache({ ...options, hostKeys: true }, block.device);
      const untracked = new DeviceKVCache({ ...options, trackAttention: false }, block.device);
      try {
        for (const cache of [tracked, untracked]) {
          cache.append(0, new Float32Array(4).fill(1), new Float32Array(4), Int32Array.of(0));
          cache.recordQueries(0, new Float32Array(4).fill(1), Int32Array.of(0));
        }
        expect(tracked.trackAttention).toBe(true);
        expectLetheError(() => tracked.observe(0, NEEDS(1)), 'E_STATE', 'observe');
        expectLetheError(() => tracked.truncate(0), 'E_STATE', 'truncate');
        await expect(untracked.observeAsync(0, NEEDS(1))).rejects.toMatchObject({
          code: 'E_STATE',
          argument: 'needs.accumulatedAttention',
        });
        await expect(tracked.observeAsync(0, NEEDS(3))).rejects.toMatchObject({
          code: 'E_STATE',
          argument: 'needs.attentionWindow',
        });
        // without the accumulated attention, the synchronous read still serves the window
        const windowOnly = { ...NEEDS(1), accumulatedAttention: false };
        const sync = tracked.observe(0, windowOnly);
        const fromDevice = await tracked.observeAsync(0, windowOnly);
        expect(sync.attention).toEqual(Float32Array.of(1));
        expect(fromDevice.attention).toEqual(Float32Array.of(1));
        expect((await tracked.observeAsync(0, NEEDS(1))).attentionCounts).toEqual(
          Float32Array.of(1),
        );
        // without a host copy of the keys (the default), what reads them on the host is refused
        // and the device serves the rest
        const lean = untracked;
        expect(lean.hostKeys).toBe(false);
        expectLetheError(() => lean.observe(0, windowOnly), 'E_STATE', 'observe');
        expectLetheError(() => lean.observe(0, { ...NO_NEEDS, keys: true }), 'E_STATE', 'observe');
        expectLetheError(
          () => lean.observe(0, { ...NO_NEEDS, pageKeyBounds: true }),
          'E_STATE',
          'needs.pageKeyBounds',
        );
        await expect(
          lean.observeAsync(0, { ...NO_NEEDS, pageKeyBounds: true }),
        ).rejects.toMatchObject({ code: 'E_STATE', argument: 'needs.pageKeyBounds' });
        expectLetheError(() => lean.view(0), 'E_STATE', 'hostKeys');
        expectLetheError(() => lean.pageKeyBounds(0, 0), 'E_STATE', 'hostKeys');
        expectLetheError(
          () => lean.gather(0, 0, Int32Array.of(0, 1), { keys: new Float32Array(4) }, 0),
          'E_STATE',
          'hostKeys',
        );
        const served = await lean.observeAsync(0, { ...windowOnly, keys: true, values: true });
        expect(served.attention).toEqual(Float32Array.of(1));
        expect(served.keys).toEqual(new Float32Array(4).fill(1));
        expect(served.values).toEqual(new Float32Array(4));
        expect(lean.observe(0, NO_NEEDS).positions).toEqual(Int32Array.of(0));
        // the host part ignores keys and values: the device cache checks them as KVCache does
        expectLetheError(
          () =>
            lean.append(
              0,
              Float32Array.of(1, Number.NaN, 1, 1),
              new Float32Array(4),
              Int32Array.of(1),
            ),
          'E_ARG',
          'keys',
        );
        expectLetheError(
          () => lean.append(0, new Float32Array(4), new Float32Array(3), Int32Array.of(1)),
          'E_SHAPE',
          'values',
        );
        expect(lean.length(0)).toBe(1);
        expectLetheError(
          () => new DeviceKVCache({ ...options, storeKeys: false }, block.device),
          'E_ARG',
          'storeKeys',
        );
        expectLetheError(
          () => new DeviceKVCache(null as unknown as KVCacheOptions, block.device),
          'E_ARG',
          'options',
        );
        expectLetheError(
          () => new DeviceKVCache({ ...options, hostKeys: 1 as unknown as boolean }, block.device),
          'E_ARG',
          'hostKeys',
        );
      } finally {
        tracked.dispose();
        untracked.dispose();
      }
    });

    it('says the device was lost instead of observing or accumulating on', async () => {
      const own = await ownDevice();
      const cache = new DeviceKVCache(
        {
          geometry: { layers: 1, kvHeads: 1, headDim: 4, pageSize: 4 },
          queryHeads: 1,
          queryWindow: 1,
          trackAttention: true,
          trace: false,
        },
        own,
      );
      cache.append(0, new Float32Array(4).fill(1), new Float32Array(4), Int32Array.of(0));
      own.destroy();
      await own.lost;
      expectLetheError(
        () => cache.recordQueries(0, new Float32Array(4), Int32Array.of(0)),
        'E_BACKEND',
        'device',
      );
      await expect(cache.observeAsync(0, NEEDS(1))).rejects.toMatchObject({
        code: 'E_BACKEND',
        argument: 'device',
      });
      cache.dispose();
    });
  },
);
