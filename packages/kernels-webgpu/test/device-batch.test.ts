import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceKVCache } from '../src/index';
import { buildCase, type Case, checkBatch } from './attention-case';
import { referenceAttention } from './reference';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

/** One sequence of a batch: its own history and query tokens, the batch's shape. */
const partArbitrary = fc.record({
  before: fc.integer({ min: 1, max: 200 }),
  chunk: fc.integer({ min: 1, max: 64 }),
  keep: fc.double({ min: 0, max: 1, noNaN: true }),
  after: fc.integer({ min: 1, max: 20 }),
  truncate: fc.integer({ min: 0, max: 2 }),
  queries: fc.integer({ min: 1, max: 3 }),
  sparse: fc.boolean(),
  biased: fc.boolean(),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
});

const batchArbitrary = fc.record({
  kvHeads: fc.constantFrom(1, 2, 3),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 16, 32, 64),
  pageSize: fc.constantFrom(1, 4, 16),
  gated: fc.boolean(),
  chunked: fc.boolean(),
  spread: fc.constantFrom(0.5, 2, 6),
  parts: fc.array(partArbitrary, { minLength: 1, maxLength: 4 }),
});

describe.skipIf(skipWebGpu)(
  'DeviceKVCache.attendBatch: a batch in one launch (SwiftShader)',
  () => {
    const block = deviceForBlock();

    it('gives every sequence of a batch (own history, evictions, reads, biases, chunk) its own attention, in two dispatches (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(batchArbitrary, async (batch) => {
          const { parts, ...shape } = batch;
          // built one after the other: later sequences' appends grow the pool the earlier ones are in
          const { worst, dispatches } = await checkBatch(
            block.device,
            parts.map((part) => ({ ...shape, ...part }) as Case),
          );
          expect(dispatches).toBe(2);
          expect(worst).toBeLessThanOrEqual(1);
        }),
        { numRuns: 40, seed: 33 },
      );
    }, 300_000);

    it('keeps a sequence right while another on its pool grows it, evicts and is disposed', async () => {
      const shape = {
        kvHeads: 2,
        group: 2,
        headDim: 16,
        pageSize: 4,
        gated: false,
        chunk: 7,
        keep: 0.5,
        after: 3,
        truncate: 0,
        queries: 2,
        sparse: false,
        biased: true,
        chunked: true,
        spread: 2,
      };
      const first = buildCase(block.device, { ...shape, before: 30, seed: 1 });
      const expected = referenceAttention(first.host, 0, first.request);
      const second = () => buildCase(block.device, { ...shape, before: 600, seed: 2 });
      const check = async () => {
        const got = await first.cache.attendToHost(0, first.request);
        got.forEach((value, j) => {
          expect(Math.abs(value - expected.out[j]!)).toBeLessThanOrEqual(expected.tolerance[j]!);
        });
      };
      try {
        await check();
        // a second cache of the same shape shares the pool, grows it past the first's pages, goes
        const grower = second().cache;
        try {
          expect(grower.stats().pagesAllocated).toBeGreaterThan(100);
          await check();
        } finally {
          grower.dispose();
        }
        await check();
      } finally {
        first.cache.dispose();
      }
    });

    it('names parts it cannot attend together', () => {
      const shape = {
        kvHeads: 1,
        group: 1,
        headDim: 4,
        pageSize: 4,
        gated: false,
        before: 5,
        chunk: 5,
        keep: 1,
        after: 1,
        truncate: 0,
        queries: 1,
        sparse: false,
        biased: false,
        spread: 1,
        seed: 3,
      };
      const plain = buildCase(block.device, { ...shape, chunked: false });
      const chunked = buildCase(block.device, { ...shape, chunked: true });
      const wider = buildCase(block.device, { ...shape, headDim: 8, chunked: false });
      const other = buildCase(block.device, { ...shape, chunked: false, seed: 4 });
      try {
        expectLetheError(() => DeviceKVCache.attendBatch(0, []), 'E_ARG', 'parts');
        const part = (built: typeof plain) => ({ cache: built.cache, request: built.request });
        expectLetheError(
          () => DeviceKVCache.attendBatch(0, [part(plain), part(wider)]),
          'E_ARG',
          'parts',
        );
        expectLetheError(
          () => DeviceKVCache.attendBatch(0, [part(plain), part(chunked)]),
          'E_ARG',
          'parts',
        );
        expectLetheError(
          () => DeviceKVCache.attendBatch(0, [part(plain), part(plain)]),
          'E_ARG',
          'parts',
        );
        const short = {
          ...part(other),
          request: { ...other.request, queries: new Float32Array(1) },
        };
        expectLetheError(
          () => DeviceKVCache.attendBatch(0, [part(plain), short]),
          'E_SHAPE',
          'parts[1].queries',
        );
      } finally {
        for (const built of [plain, chunked, wider, other]) built.cache.dispose();
      }
    });
  },
);
