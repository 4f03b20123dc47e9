import { KVCache, type KVCacheOptions, NO_NEEDS } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { mulberry32 } from '@lethe/test-utils/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceKVCache, deviceCounters, liveGpuBuffers } from '../src/index';
import { stepRows } from './step-rows';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

/** One operation on both caches: tokens recorded from the host or from a step's rows, or a truncation. */
type Operation =
  | { readonly kind: 'record'; readonly tokens: number; readonly fromRows: boolean }
  | { readonly kind: 'truncate'; readonly keep: number };

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('record' as const),
    tokens: fc.integer({ min: 1, max: 9 }),
    fromRows: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('truncate' as const), keep: fc.double({ min: 0, max: 1 }) }),
);

const caseArbitrary = fc.record({
  queryWindow: fc.integer({ min: 1, max: 6 }),
  kvHeads: fc.constantFrom(1, 2),
  group: fc.constantFrom(1, 2),
  headDim: fc.constantFrom(4, 8),
  operations: fc.array(operationArbitrary, { minLength: 1, maxLength: 10 }),
  seed: fc.integer(),
});

describe.skipIf(skipWebGpu)(
  'DeviceKVCache: a query window kept on the device (SwiftShader)',
  () => {
    const block = deviceForBlock();

    it('observes the queries a KVCache window holds — recorded from the host or from rows, across wraps and truncations — and their attention (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(caseArbitrary, async (c) => {
          const random = mulberry32(c.seed);
          const draw = (n: number) =>
            Float32Array.from({ length: n }, () => Math.fround(random() * 2 - 1));
          const queryHeads = c.kvHeads * c.group;
          const options: KVCacheOptions = {
            geometry: { layers: 1, kvHeads: c.kvHeads, headDim: c.headDim, pageSize: 4 },
            queryHeads,
            queryWindow: c.queryWindow,
            trace: false,
          };
          const cache = new DeviceKVCache(options, block.device);
          const host = new KVCache(options);
          const needs = { ...NO_NEEDS, attentionWindow: c.queryWindow };
          try {
            for (const operation of c.operations) {
              if (operation.kind === 'truncate') {
                const length = Math.floor(operation.keep * host.length(0));
                for (const target of [cache, host]) target.truncate(length);
              } else {
                const { tokens } = operation;
                const first = host.length(0);
                const positions = Int32Array.from({ length: tokens }, (_, t) => first + t);
                const keys = draw(tokens * c.kvHeads * c.headDim);
                const values = draw(tokens * c.kvHeads * c.headDim);
                const queries = draw(tokens * queryHeads * c.headDim);
                host.append(0, keys, values, positions);
                host.recordQueries(0, queries, positions);
                if (operation.fromRows) {
                  // the tokens in rows 2… of a step's rows
                  const shape = { queryHeads, kvHeads: c.kvHeads, headDim: c.headDim };
                  const rows = stepRows(
                    block.device,
                    shape,
                    [{ queries, chunk: { keys, values } }],
                    [2],
                    tokens + 2,
                  );
                  try {
                    cache.appendRows(0, rows, 2, positions);
                    const before = deviceCounters().uploadedBytes;
                    cache.recordQueriesFromRows(0, rows, 2, positions);
                    // the queries are copied on the device, not uploaded
                    expect(deviceCounters().uploadedBytes).toBe(before);
                  } finally {
                    rows.dispose();
                  }
                } else {
                  cache.append(0, keys, values, positions);
                  cache.recordQueries(0, queries, positions);
                }
              }
              const want = host.observe(0, needs);
              const got = await cache.observeAsync(0, needs);
              expect(got.window).toBe(want.window);
              expect(Array.from(got.queries ?? [])).toEqual(Array.from(want.queries ?? []));
              expect(got.attention?.length).toBe(want.attention?.length);
              // float32 softmax against the host's float64 one over ≤ 90 keys with |logit| ≤ 4:
              // errors of a few ulps; a wrong query moves a probability by far more
              got.attention?.forEach((p, i) => {
                expect(Math.abs(p - want.attention![i]!)).toBeLessThan(1e-5);
              });
            }
          } finally {
            cache.dispose();
          }
        }),
        { numRuns: 40, seed: 0x7a11 },
      );
    }, 300_000);

    it('keeps the window on the host with hostKeys, and frees its ring with the cache', () => {
      const options: KVCacheOptions = {
        geometry: { layers: 2, kvHeads: 1, headDim: 4, pageSize: 4 },
        queryHeads: 1,
        queryWindow: 3,
        trace: false,
      };
      const before = liveGpuBuffers().buffers;
      const made = (cacheOptions: KVCacheOptions) => {
        const count = liveGpuBuffers().buffers;
        const cache = new DeviceKVCache(cacheOptions, block.device);
        return { cache, buffers: liveGpuBuffers().buffers - count };
      };
      const first = made(options);
      first.cache.dispose();
      const plain = made({ ...options, queryWindow: 0 });
      plain.cache.dispose();
      const lean = made(options);
      // the ring: one buffer more than a cache without a window, in the same pool state
      expect(lean.buffers).toBe(plain.buffers + 1);
      const mirrored = new DeviceKVCache({ ...options, hostKeys: true }, block.device);
      const rows = stepRows(block.device, { queryHeads: 1, kvHeads: 1, headDim: 4 }, [], [], 1);
      try {
        mirrored.append(0, new Float32Array(4), new Float32Array(4), Int32Array.of(0));
        expectLetheError(
          () => mirrored.recordQueriesFromRows(0, rows, 0, Int32Array.of(0)),
          'E_STATE',
          'hostKeys',
        );
        // the synchronous observation of the window, served by the host copy
        mirrored.recordQueries(0, Float32Array.of(1, 2, 3, 4), Int32Array.of(0));
        expect(mirrored.observe(0, { ...NO_NEEDS, attentionWindow: 1 }).queries).toEqual(
          Float32Array.of(1, 2, 3, 4),
        );
      } finally {
        rows.dispose();
        mirrored.dispose();
        lean.cache.dispose();
      }
      expect(liveGpuBuffers().buffers).toBe(before);
    });
  },
);
