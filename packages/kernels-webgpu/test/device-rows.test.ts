import { KVCache, NO_NEEDS } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { mulberry32 } from '@lethe/test-utils/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DeviceKVCache,
  DeviceRows,
  destroyGpuBuffer,
  deviceCounters,
  NON_FINITE,
  readBack,
} from '../src/index';
import { buildCase, type Case } from './attention-case';
import { deviceArray, stepRows } from './step-rows';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

const f32 = Math.fround;

/** `[2, tokens, half]` cos then sin of `position · frequency`, the float32 angle's, rounded. */
function rotationOf(positions: readonly number[], frequencies: Float32Array): Float32Array {
  const half = frequencies.length;
  const out = new Float32Array(2 * positions.length * half);
  positions.forEach((position, n) => {
    for (let i = 0; i < half; i++) {
      const angle = f32(position * frequencies[i]!);
      out[n * half + i] = Math.cos(angle);
      out[(positions.length + n) * half + i] = Math.sin(angle);
    }
  });
  return out;
}

/** The shape of the batches attended from rows (gated, biased, each sequence with its chunk). */
const ROWS_CASE = {
  kvHeads: 2,
  group: 2,
  headDim: 16,
  pageSize: 4,
  gated: true,
  chunk: 9,
  keep: 0.6,
  after: 4,
  truncate: 0,
  sparse: true,
  biased: true,
  chunked: true,
  spread: 2,
};

const ropeArbitrary = fc.record({
  kvHeads: fc.constantFrom(1, 2, 3),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 16, 32, 64, 128),
  tokens: fc.integer({ min: 1, max: 12 }),
  layers: fc.integer({ min: 1, max: 3 }),
  start: fc.integer({ min: 0, max: 8000 }),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
});

describe.skipIf(skipWebGpu)(
  'DeviceRows: a step’s attention inputs on the device (SwiftShader)',
  () => {
    const block = deviceForBlock();

    it('rotates queries and keys and copies values from a fused projection, as the host does (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(ropeArbitrary, async (c) => {
          const random = mulberry32(c.seed);
          const queryHeads = c.kvHeads * c.group;
          const heads = queryHeads + 2 * c.kvHeads;
          const half = c.headDim / 2;
          const frequencies = Float32Array.from({ length: half }, (_, i) =>
            f32(1 / 10000 ** ((2 * i) / c.headDim)),
          );
          const positions = Array.from({ length: c.tokens }, (_, n) => c.start + 3 * n);
          const rows = new DeviceRows(
            block.device,
            { layers: c.layers, queryHeads, kvHeads: c.kvHeads, headDim: c.headDim },
            rotationOf(positions, frequencies),
          );
          const rotation = rotationOf(positions, frequencies);
          const layer = c.layers - 1;
          const columns = Float32Array.from({ length: heads * c.headDim * c.tokens }, () =>
            f32((random() * 2 - 1) * 4),
          );
          const projection = deviceArray(block.device, columns);
          try {
            rows.rotate(layer, projection);
            const got = new Float32Array(
              await readBack(block.device, rows.buffer, rows.buffer.size),
            ).subarray(layer * rows.floatsPerLayer, (layer + 1) * rows.floatsPerLayer);
            let worst = 0;
            for (let n = 0; n < c.tokens; n++) {
              for (let h = 0; h < heads; h++) {
                const section = h < queryHeads ? 0 : h < queryHeads + c.kvHeads ? 1 : 2;
                const sectionHeads = section === 0 ? queryHeads : c.kvHeads;
                const head = h - (section === 0 ? 0 : queryHeads + (section - 1) * c.kvHeads);
                const base =
                  (section === 0 ? 0 : c.tokens * (queryHeads + (section - 1) * c.kvHeads)) *
                  c.headDim;
                const at = base + (n * sectionHeads + head) * c.headDim;
                for (let i = 0; i < half; i++) {
                  const first = columns[(h * c.headDim + i) * c.tokens + n]!;
                  const second = columns[(h * c.headDim + half + i) * c.tokens + n]!;
                  if (section === 2) {
                    expect(got[at + i]).toBe(first);
                    expect(got[at + half + i]).toBe(second);
                    continue;
                  }
                  const cos = rotation[n * half + i]!;
                  const sin = rotation[(c.tokens + n) * half + i]!;
                  // the host's float32 products and sum; a fused multiply-add may round once less
                  const expected = [
                    f32(f32(first * cos) + f32(-second * sin)),
                    f32(f32(second * cos) + f32(first * sin)),
                  ];
                  const bound = 2 ** -23 * (Math.abs(first) + Math.abs(second));
                  worst = Math.max(
                    worst,
                    Math.abs(got[at + i]! - expected[0]!) / bound,
                    Math.abs(got[at + half + i]! - expected[1]!) / bound,
                  );
                }
              }
            }
            expect(worst).toBeLessThanOrEqual(1);
          } finally {
            destroyGpuBuffer(projection);
            rows.dispose();
          }
        }),
        { numRuns: 40, seed: 31 },
      );
    }, 120_000);

    it('attends a batch from the step’s rows exactly as from uploaded queries and chunks', async () => {
      const shape = ROWS_CASE;
      const cases: Case[] = [
        { ...shape, before: 40, queries: 1, seed: 5 },
        { ...shape, before: 150, queries: 3, seed: 6, sparse: false },
        { ...shape, before: 7, queries: 2, seed: 7 },
      ];
      const built = cases.map((c) => buildCase(block.device, c));
      const { kvHeads, headDim } = shape;
      const queryHeads = kvHeads * shape.group;
      // the step's rows: the parts in another order, one unused row first
      const order = [2, 0, 1];
      const firstRow = new Map<number, number>();
      let tokens = 1;
      for (const p of order) {
        firstRow.set(p, tokens);
        tokens += cases[p]!.queries;
      }
      const heads = queryHeads + 2 * kvHeads;
      const rows = stepRows(
        block.device,
        { queryHeads, kvHeads, headDim },
        built.map(({ request }) => request),
        built.map((_, p) => firstRow.get(p)!),
        tokens,
      );
      const total = cases.reduce((sum, c) => sum + c.queries, 0);
      const bytes = 4 * total * queryHeads * headDim;
      try {
        const uploaded = DeviceKVCache.attendBatch(
          0,
          built.map(({ cache, request }) => ({ cache, request })),
        );
        const expected = new Float32Array(await readBack(block.device, uploaded, bytes));
        destroyGpuBuffer(uploaded);
        const before = deviceCounters();
        const fromRows = DeviceKVCache.attendRows(
          0,
          built.map(({ cache, request }, p) => ({
            cache,
            request: {
              queryPositions: request.queryPositions,
              firstRow: firstRow.get(p)!,
              ranges: request.ranges,
              liveBias: request.liveBias,
              chunkBias: request.chunk!.bias,
            },
          })),
          rows,
        );
        const after = deviceCounters();
        const got = new Float32Array(await readBack(block.device, fromRows, bytes));
        destroyGpuBuffer(fromRows);
        expect(after.dispatches - before.dispatches).toBe(2);
        // no query or chunk row is uploaded: only the plan and the parameters
        const planned = after.uploadedBytes - before.uploadedBytes;
        expect(planned).toBeLessThan(4 * tokens * heads * headDim);
        expect(Array.from(got)).toEqual(Array.from(expected));
        expect(got.some((x) => x !== 0)).toBe(true);
      } finally {
        rows.dispose();
        for (const { cache } of built) cache.dispose();
      }
    });

    it('biases each token’s own key by the log-gate the rows hold, reports the gates and flags a non-finite one', async () => {
      const shape = { ...ROWS_CASE, sparse: false };
      const cases: Case[] = [
        { ...shape, before: 40, queries: 1, seed: 15 },
        { ...shape, before: 21, queries: 3, seed: 16 },
      ];
      const built = cases.map((c) => buildCase(block.device, c));
      const { kvHeads, headDim } = shape;
      const queryHeads = kvHeads * shape.group;
      const tokens = 5; // row 0 unused, then the two parts
      const firstRows = [1, 2];
      // the parts' chunk biases as the rows' log-gates (a gate of 0, −∞, in the second part)
      const logGates = new Float32Array(tokens * kvHeads);
      built.forEach(({ request }, p) => {
        logGates.set(request.chunk!.bias!, firstRows[p]! * kvHeads);
      });
      logGates[3 * kvHeads + 1] = Number.NEGATIVE_INFINITY;
      built[1]!.request.chunk!.bias![1 * kvHeads + 1] = Number.NEGATIVE_INFINITY;
      const gates = logGates.map((x) => f32(Math.exp(x)));
      gates[4 * kvHeads] = Number.NaN; // flagged, row 4
      const rows = stepRows(
        block.device,
        { queryHeads, kvHeads, headDim, gated: true },
        built.map(({ request }) => request),
        firstRows,
        tokens,
      );
      const source = deviceArray(block.device, Float32Array.of(...logGates, ...gates));
      const small = deviceArray(block.device, new Float32Array(4));
      const bytes = 4 * 4 * queryHeads * headDim;
      try {
        rows.writeGates(0, source);
        const uploaded = DeviceKVCache.attendBatch(
          0,
          built.map(({ cache, request }) => ({ cache, request })),
        );
        const expected = new Float32Array(await readBack(block.device, uploaded, bytes));
        destroyGpuBuffer(uploaded);
        const fromRows = DeviceKVCache.attendRows(
          0,
          built.map(({ cache, request }, p) => ({
            cache,
            request: {
              queryPositions: request.queryPositions,
              firstRow: firstRows[p]!,
              liveBias: request.liveBias,
            },
          })),
          rows,
        );
        const got = new Float32Array(await readBack(block.device, fromRows, bytes));
        destroyGpuBuffer(fromRows);
        expect(Array.from(got)).toEqual(Array.from(expected));
        const report = new Uint32Array(await readBack(block.device, rows.flags, rows.flags.size));
        const reported = new Float32Array(report.buffer);
        for (let n = 0; n < tokens; n++) {
          for (let h = 0; h < kvHeads; h++) {
            expect(Object.is(reported[rows.gateSlot(0, n, h)], gates[n * kvHeads + h])).toBe(true);
          }
          expect(report[rows.gateFlagSlot(0, n)], `row ${n}`).toBe(n === 4 ? NON_FINITE.nan : 0);
        }
        expectLetheError(
          () =>
            DeviceKVCache.attendRows(
              0,
              [
                {
                  cache: built[0]!.cache,
                  request: {
                    queryPositions: built[0]!.request.queryPositions,
                    firstRow: 1,
                    chunkBias: new Float32Array(kvHeads),
                  },
                },
              ],
              rows,
            ),
          'E_ARG',
          'parts[0].chunkBias',
        );
        const plain = stepRows(
          block.device,
          { queryHeads, kvHeads, headDim },
          [built[0]!.request],
          [0],
          1,
        );
        expectLetheError(() => plain.writeGates(0, source), 'E_STATE', 'shape.gated');
        plain.dispose();
        expectLetheError(() => rows.writeGates(0, small), 'E_SHAPE', 'source');
      } finally {
        destroyGpuBuffer(small);
        destroyGpuBuffer(source);
        rows.dispose();
        for (const { cache } of built) cache.dispose();
      }
    });

    it('flags the rows holding a NaN, +∞ or −∞ (read or written), by layer and section', async () => {
      const shape = { layers: 2, queryHeads: 2, kvHeads: 1, headDim: 4 };
      const tokens = 3;
      const heads = shape.queryHeads + 2 * shape.kvHeads;
      const rows = new DeviceRows(
        block.device,
        shape,
        rotationOf([0, 1, 2], Float32Array.of(1, 0.5)),
      );
      const columns = new Float32Array(heads * shape.headDim * tokens).fill(0.5);
      const set = (head: number, channel: number, token: number, value: number) => {
        columns[(head * shape.headDim + channel) * tokens + token] = value;
      };
      set(1, 3, 0, Number.NaN); // a query of token 0
      set(2, 0, 2, Number.POSITIVE_INFINITY); // a key of token 2
      set(3, 1, 1, Number.NEGATIVE_INFINITY); // a value of token 1
      set(2, 1, 1, 3e38); // a key of token 1 that the rotation overflows
      set(2, 3, 1, 3e38);
      const projection = deviceArray(block.device, columns);
      try {
        rows.rotate(1, projection);
        const flags = new Uint32Array(await readBack(block.device, rows.flags, rows.flags.size));
        const at = (section: number, token: number) => (1 * 3 + section) * tokens + token;
        // a NaN stays NaN through the rotation; a copied value keeps its sign; +∞ rotated spreads
        // over its pair (signs following cos and sin); the overflowing key is finite until rotated
        expect(flags[at(0, 0)]).toBe(NON_FINITE.nan);
        expect(flags[at(2, 1)]).toBe(NON_FINITE.negative);
        expect(flags[at(1, 2)]! & NON_FINITE.positive).toBe(NON_FINITE.positive);
        expect(flags[at(1, 1)]! & (NON_FINITE.positive | NON_FINITE.negative)).not.toBe(0);
        const flagged = [at(0, 0), at(2, 1), at(1, 2), at(1, 1)];
        flags.forEach((bits, i) => {
          if (!flagged.includes(i)) expect(bits, `word ${i}`).toBe(0);
        });
      } finally {
        destroyGpuBuffer(projection);
        rows.dispose();
      }
    });

    it('appends a step’s rows into the pages exactly (appendRows), across pages and heads', async () => {
      const geometry = { layers: 2, kvHeads: 2, headDim: 8, pageSize: 4 };
      const shape = { layers: 2, queryHeads: 4, kvHeads: 2, headDim: 8 };
      const options = { geometry, queryHeads: 4, trace: false };
      const random = mulberry32(9);
      const draw = (n: number) => Float32Array.from({ length: n }, () => f32(random() * 2 - 1));
      const cache = new DeviceKVCache(options, block.device);
      const host = new KVCache(options);
      const kvSize = geometry.kvHeads * geometry.headDim;
      // three tokens appended from the host first, then six from the rows (rows 2–7 of 9)
      const keys = draw(3 * kvSize);
      const values = draw(3 * kvSize);
      cache.append(1, keys, values, Int32Array.of(0, 1, 2));
      host.append(1, keys, values, Int32Array.of(0, 1, 2));
      const tokens = 9;
      const heads = shape.queryHeads + 2 * shape.kvHeads;
      const columns = draw(heads * shape.headDim * tokens);
      const rotation = new Float32Array(tokens * shape.headDim);
      rotation.fill(1, 0, (tokens * shape.headDim) / 2);
      const rows = new DeviceRows(block.device, shape, rotation);
      const projection = deviceArray(block.device, columns);
      const rowsOf = (head: number, first: number, count: number) => {
        const out = new Float32Array(count * kvSize);
        for (let t = 0; t < count; t++) {
          for (let h = 0; h < geometry.kvHeads; h++) {
            for (let d = 0; d < geometry.headDim; d++) {
              out[(t * geometry.kvHeads + h) * geometry.headDim + d] =
                columns[((head + h) * geometry.headDim + d) * tokens + first + t]!;
            }
          }
        }
        return out;
      };
      const positions = Int32Array.of(3, 4, 5, 6, 7, 8);
      try {
        rows.rotate(1, projection);
        const before = deviceCounters();
        cache.appendRows(1, rows, 2, positions);
        const uploaded = deviceCounters().uploadedBytes - before.uploadedBytes;
        host.append(
          1,
          rowsOf(shape.queryHeads, 2, 6),
          rowsOf(shape.queryHeads + shape.kvHeads, 2, 6),
          positions,
        );
        // the keys and values were not uploaded: positions, table entries and the move list only
        expect(uploaded).toBeLessThan(6 * kvSize * 4);
        const needs = { ...NO_NEEDS, keys: true, values: true };
        const got = await cache.observeAsync(1, needs);
        const want = host.observe(1, needs);
        expect(Array.from(got.keys!)).toEqual(Array.from(want.keys!));
        expect(Array.from(got.values!)).toEqual(Array.from(want.values!));
        expect(Array.from(got.positions)).toEqual(Array.from(want.positions));
        expect(cache.stats().pagesAllocated).toBe(3 * geometry.kvHeads);
        expectLetheError(
          () => cache.appendRows(1, rows, 4, Int32Array.of(9, 10, 11, 12, 13, 14)),
          'E_ARG',
          'firstRow',
        );
        expectLetheError(
          () => cache.appendRows(1, rows, 0, Int32Array.of(2)),
          'E_ARG',
          'positions',
        );
        const mirrored = new DeviceKVCache({ ...options, hostKeys: true }, block.device);
        try {
          expectLetheError(
            () => mirrored.appendRows(1, rows, 0, Int32Array.of(0)),
            'E_STATE',
            'hostKeys',
          );
        } finally {
          mirrored.dispose();
        }
      } finally {
        destroyGpuBuffer(projection);
        rows.dispose();
        cache.dispose();
      }
    });

    it('records queries from a step’s rows as from the host: the same accumulated attention, bit for bit', async () => {
      const geometry = { layers: 1, kvHeads: 2, headDim: 8, pageSize: 4 };
      const options = { geometry, queryHeads: 4, trace: false, trackAttention: true };
      const random = mulberry32(12);
      const draw = (n: number) => Float32Array.from({ length: n }, () => f32(random() * 2 - 1));
      const fromHost = new DeviceKVCache(options, block.device);
      const fromRows = new DeviceKVCache(options, block.device);
      const windowed = new DeviceKVCache(
        { ...options, queryWindow: 2, hostKeys: true },
        block.device,
      );
      const kvSize = 2 * 8;
      const querySize = 4 * 8;
      let rows: DeviceRows | undefined;
      try {
        for (const [first, tokens] of [
          [0, 13],
          [13, 1],
          [14, 3],
        ] as const) {
          const keys = draw(tokens * kvSize);
          const values = draw(tokens * kvSize);
          const queries = draw(tokens * querySize);
          const positions = Int32Array.from({ length: tokens }, (_, t) => first + t);
          for (const cache of [fromHost, fromRows]) cache.append(0, keys, values, positions);
          fromHost.recordQueries(0, queries, positions);
          // the tokens in rows 1… of a step's rows (row 0 unused)
          rows = stepRows(
            block.device,
            { queryHeads: 4, kvHeads: 2, headDim: 8 },
            [{ queries, chunk: { keys, values } }],
            [1],
            tokens + 1,
          );
          fromRows.recordQueriesFromRows(0, rows, 1, positions);
          rows.dispose();
        }
        const needs = { ...NO_NEEDS, accumulatedAttention: true };
        const want = await fromHost.observeAsync(0, needs);
        const got = await fromRows.observeAsync(0, needs);
        expect(Array.from(got.accumulatedAttention!)).toEqual(
          Array.from(want.accumulatedAttention!),
        );
        expect(Array.from(got.attentionCounts!)).toEqual(Array.from(want.attentionCounts!));
        expect(got.accumulatedAttention!.some((x) => x > 0)).toBe(true);
        rows = stepRows(
          block.device,
          { queryHeads: 4, kvHeads: 2, headDim: 8 },
          [{ queries: draw(querySize) }],
          [0],
          1,
        );
        expectLetheError(
          () => windowed.recordQueriesFromRows(0, rows!, 0, Int32Array.of(0)),
          'E_STATE',
          'hostKeys',
        );
        expectLetheError(
          () => fromRows.recordQueriesFromRows(0, rows!, 1, Int32Array.of(17)),
          'E_ARG',
          'firstRow',
        );
        expectLetheError(
          () => fromRows.recordQueriesFromRows(0, rows!, 0, Int32Array.of(3)),
          'E_ARG',
          'positions',
        );
      } finally {
        rows?.dispose();
        for (const cache of [fromHost, fromRows, windowed]) cache.dispose();
      }
    });

    it('names what it cannot rotate or attend', () => {
      const geometry = { layers: 2, kvHeads: 1, headDim: 8, pageSize: 4 };
      const cache = new DeviceKVCache({ geometry, queryHeads: 2 }, block.device);
      const shape = { layers: 2, queryHeads: 2, kvHeads: 1, headDim: 8 };
      expectLetheError(
        () => new DeviceRows(block.device, shape, new Float32Array(7)),
        'E_SHAPE',
        'rotation',
      );
      expectLetheError(
        () => new DeviceRows(block.device, { ...shape, headDim: 6 }, new Float32Array(12)),
        'E_SHAPE',
        'shape.headDim',
      );
      const rows = new DeviceRows(block.device, shape, new Float32Array(16));
      const wide = new DeviceRows(block.device, { ...shape, queryHeads: 4 }, new Float32Array(16));
      const small = deviceArray(block.device, new Float32Array(8));
      try {
        expect(rows.tokens).toBe(2);
        expectLetheError(() => rows.rotate(0, small), 'E_SHAPE', 'projection');
        expectLetheError(() => rows.rotate(2, small), 'E_ARG', 'layer');
        const part = (firstRow: number) => ({
          cache,
          request: { queryPositions: Int32Array.of(0), firstRow },
        });
        expectLetheError(
          () => DeviceKVCache.attendRows(0, [part(2)], rows),
          'E_ARG',
          'parts[0].firstRow',
        );
        expectLetheError(() => DeviceKVCache.attendRows(0, [part(0)], wide), 'E_ARG', 'rows');
        expectLetheError(() => DeviceKVCache.attendRows(0, [], rows), 'E_ARG', 'parts');
        rows.dispose();
        expectLetheError(() => DeviceKVCache.attendRows(0, [part(0)], rows), 'E_STATE', 'dispose');
      } finally {
        destroyGpuBuffer(small);
        rows.dispose();
        wide.dispose();
        cache.dispose();
      }
    });
  },
);
