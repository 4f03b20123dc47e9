import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  candidatePages,
  checkRanges,
  chosenPageRanges,
  DEFAULT_READ_ANCHORS,
  intersectRanges,
  pageKeyBounds,
  pageRanges,
  pageUpperBounds,
  questPageScores,
  rangeLength,
  resolveReadAnchors,
  tokenKeepBudget,
  tokenKeepPageCount,
  tokenKeepRanking,
  tokenKeepRead,
  topPagesMaxRead,
} from '../src/index';
import { mulberry32 } from './helpers';

const floats = (length: number) =>
  fc.array(fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true }), {
    minLength: length,
    maxLength: length,
  });

/** Random keys `[live, headDim]` and a query of `group` heads `[group, headDim]`. */
const caseArb = fc
  .record({
    live: fc.integer({ min: 1, max: 60 }),
    headDim: fc.integer({ min: 1, max: 5 }),
    pageSize: fc.integer({ min: 1, max: 8 }),
    group: fc.integer({ min: 1, max: 3 }),
  })
  .chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      keys: floats(shape.live * shape.headDim),
      queries: floats(shape.group * shape.headDim),
    }),
  )
  .map(({ shape, keys, queries }) => ({
    ...shape,
    keys: Float32Array.from(keys),
    queries: Float32Array.from(queries),
  }));

function dot(a: Float32Array, ai: number, b: Float32Array, bi: number, n: number): number {
  let s = 0;
  for (let c = 0; c < n; c++) s += a[ai + c] * b[bi + c];
  return s;
}

describe('Quest page bound', () => {
  it('is ≥ the true max q·k over the page for every query head of the group (max reduce)', () => {
    fc.assert(
      fc.property(caseArb, ({ live, headDim, pageSize, group, keys, queries }) => {
        const bounds = pageKeyBounds(keys, headDim, pageSize);
        const scores = questPageScores(bounds, queries, group);
        const sums = questPageScores(bounds, queries, group, 'sum');
        expect(scores.length).toBe(Math.ceil(live / pageSize));
        for (let p = 0; p < bounds.pages; p++) {
          let bruteMax = Number.NEGATIVE_INFINITY;
          let bruteSum = 0;
          for (let g = 0; g < group; g++) {
            // Σ_c max_i q_c·k_ic: the bound's definition, by brute force over the page's keys
            let bound = 0;
            for (let c = 0; c < headDim; c++) {
              let best = Number.NEGATIVE_INFINITY;
              for (let i = p * pageSize; i < Math.min(live, (p + 1) * pageSize); i++)
                best = Math.max(best, queries[g * headDim + c] * keys[i * headDim + c]);
              bound += best;
            }
            bruteMax = Math.max(bruteMax, bound);
            bruteSum += bound;
            for (let i = p * pageSize; i < Math.min(live, (p + 1) * pageSize); i++) {
              const qk = dot(queries, g * headDim, keys, i * headDim, headDim);
              expect(scores[p]).toBeGreaterThanOrEqual(qk - 1e-4 * (1 + Math.abs(qk)));
            }
          }
          expect(scores[p]).toBeCloseTo(bruteMax, 3);
          expect(sums[p]).toBeCloseTo(bruteSum, 3);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('scores every page as the plain per-page float32 lane sums, bit for bit, over any page range and both reduces', () => {
    // the definition, one page and one query head at a time: float32 sums of max(q·max, q·min)
    // over the channels of each lane c mod 4 in order, then (l0 + l2) + (l1 + l3), reduced over
    // the group in float32 (a head dimension that is a multiple of 4 runs the SIMD kernel)
    const plain = (
      min: Float32Array,
      max: Float32Array,
      queries: Float32Array,
      group: number,
      reduce: 'max' | 'sum',
      firstPage: number,
      endPage: number,
    ): Float32Array => {
      const headDim = queries.length / group;
      const out = new Float32Array(endPage - firstPage);
      for (let p = firstPage; p < endPage; p++) {
        const heads = new Float32Array(group);
        for (let g = 0; g < group; g++) {
          const lanes = new Float32Array(4);
          for (let c = 0; c < headDim; c++) {
            const q = queries[g * headDim + c]!;
            const high = Math.fround(q * max[p * headDim + c]!);
            lanes[c % 4] += Math.max(high, Math.fround(q * min[p * headDim + c]!));
          }
          heads[g] = Math.fround(lanes[0]! + lanes[2]!) + Math.fround(lanes[1]! + lanes[3]!);
        }
        out[p - firstPage] = heads.reduce(
          (a, b) => (reduce === 'max' ? Math.max(a, b) : Math.fround(a + b)),
          reduce === 'max' ? Number.NEGATIVE_INFINITY : 0,
        );
      }
      return out;
    };
    const shapeArb = fc.record({
      pages: fc.integer({ min: 0, max: 23 }),
      headDim: fc.integer({ min: 1, max: 20 }),
      group: fc.integer({ min: 1, max: 4 }),
    });
    fc.assert(
      fc.property(
        shapeArb.chain((shape) =>
          fc.record({
            shape: fc.constant(shape),
            a: floats(shape.pages * shape.headDim),
            b: floats(shape.pages * shape.headDim),
            queries: floats(shape.group * shape.headDim),
            from: fc.nat(shape.pages),
            to: fc.nat(shape.pages),
          }),
        ),
        fc.constantFrom('max' as const, 'sum' as const),
        ({ shape, a, b, queries, from, to }, reduce) => {
          const { pages, group } = shape;
          const min = Float32Array.from(a, (x, i) => Math.min(x, b[i]!));
          const max = Float32Array.from(a, (x, i) => Math.max(x, b[i]!));
          const q = Float32Array.from(queries);
          const [first, end] = [Math.min(from, to), Math.max(from, to)];
          const got = questPageScores({ pages, min, max }, q, group, reduce, first, end);
          expect(got).toEqual(plain(min, max, q, group, reduce, first, end));
          expect(questPageScores({ pages, min, max }, q, group, reduce)).toEqual(
            plain(min, max, q, group, reduce, 0, pages),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('pageUpperBounds is the single-head form and checks the bounds shape', () => {
    const random = mulberry32(3);
    const keys = Float32Array.from({ length: 50 * 4 }, () => random() * 2 - 1);
    const query = Float32Array.of(0.7, -1.2, 0.1, 2);
    const bounds = pageKeyBounds(keys, 4, 16);
    expect(bounds.pages).toBe(4);
    expect(pageUpperBounds(bounds, query)).toEqual(questPageScores(bounds, query, 1));
    expectLetheError(() => pageUpperBounds(bounds, new Float32Array(3)), 'E_SHAPE', 'bounds.min');
    expectLetheError(() => pageKeyBounds(keys, 3, 16), 'E_ARG', 'keys.length / headDim');
  });
});

/** The entries of a set of entry ranges, in order. */
function set(ranges: Int32Array): number[] {
  const out: number[] = [];
  for (let r = 0; r < ranges.length; r += 2)
    for (let i = ranges[r]; i < ranges[r + 1]; i++) out.push(i);
  return out;
}

describe('entry ranges', () => {
  it('pageRanges and intersectRanges equal the brute-force sets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (live, pageSize, a, b) => {
          const pages = Math.ceil(live / pageSize);
          const listA = Int32Array.from(pages === 0 ? [] : a.map((x) => x % pages));
          const listB = Int32Array.from(pages === 0 ? [] : b.map((x) => x % pages));
          const inPages = (list: Int32Array) =>
            Array.from({ length: live }, (_, i) => i).filter((i) =>
              list.includes(Math.floor(i / pageSize)),
            );
          const rangesA = pageRanges(listA, live, pageSize);
          const rangesB = pageRanges(listB, live, pageSize);
          expect(set(rangesA)).toEqual(inPages(listA));
          for (let r = 2; r < rangesA.length; r += 2)
            expect(rangesA[r]).toBeGreaterThan(rangesA[r - 1]); // merged
          const both = intersectRanges(rangesA, rangesB);
          expect(set(both)).toEqual(inPages(listA).filter((i) => inPages(listB).includes(i)));
          expect(rangeLength(both)).toBe(set(both).length);
        },
      ),
    );
  });
});

describe('token keep read (κ)', () => {
  const anchorsArb = fc.record({
    sinks: fc.integer({ min: 0, max: 6 }),
    window: fc.integer({ min: 0, max: 4 }),
  });

  it('reads the anchors plus the top ⌈max(0, b − s − w) / S⌉ pages, b = ⌈κ·K⌉, as merged ranges; the count is the formula', () => {
    fc.assert(
      fc.property(
        caseArb,
        anchorsArb,
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        ({ live, headDim, pageSize, group, keys, queries }, anchors, keepRate) => {
          const bounds = pageKeyBounds(keys, headDim, pageSize);
          const read = tokenKeepRead(live, bounds, queries, group, keepRate, anchors, pageSize);
          const s = Math.min(anchors.sinks, live);
          const w = Math.min(anchors.window, live - s);
          const b = Math.ceil(keepRate * live);
          expect(tokenKeepBudget(keepRate, live)).toBe(b);
          const n = Math.ceil(Math.max(0, b - s - w) / pageSize);
          expect(tokenKeepPageCount(keepRate, live, anchors, pageSize)).toBe(n);
          const first = Math.floor(s / pageSize);
          const end = Math.ceil((live - w) / pageSize);
          if (keepRate >= 1 || s >= live - w || n >= end - first) {
            expect(read).toBeUndefined(); // every entry: the dense read
            return;
          }
          expect(read).toBeDefined();
          // checked entry ranges, none empty, adjacent ones merged
          checkRanges(read!.ranges, live, 'ranges');
          for (let r = 0; r < read!.ranges.length; r += 2) {
            expect(read!.ranges[r + 1]).toBeGreaterThan(read!.ranges[r]!);
            if (r > 0) expect(read!.ranges[r]).toBeGreaterThan(read!.ranges[r - 1]!);
          }
          expect(rangeLength(read!.ranges)).toBe(read!.count);
          const entries = set(read!.ranges);
          expect(read!.count).toBe(entries.length);
          expect(read!.pages).toBe(n);
          // the anchors are always read
          for (let i = 0; i < s; i++) expect(entries).toContain(i);
          for (let i = live - w; i < live; i++) expect(entries).toContain(i);
          // the middle entries read are exactly those of n whole candidate pages, the best by
          // the brute-force bound (max over the group), ties to the older page
          const middle = entries.filter((i) => i >= s && i < live - w);
          const chosen = [...new Set(middle.map((i) => Math.floor(i / pageSize)))];
          expect(chosen.length).toBe(n);
          const score = (p: number) => questPageScores(bounds, queries, group, 'max', p, p + 1)[0];
          const ranked = Array.from({ length: end - first }, (_, k) => first + k).sort(
            (x, y) => score(y) - score(x) || x - y,
          );
          expect(chosen.sort((x, y) => x - y)).toEqual(ranked.slice(0, n).sort((x, y) => x - y));
          const expectedMiddle = chosen.flatMap((p) =>
            Array.from({ length: pageSize }, (_, k) => p * pageSize + k).filter(
              (i) => i >= s && i < live - w,
            ),
          );
          // the formula: s + w + Σ over the chosen pages of |page ∩ [s, K − w)|
          expect(read!.count).toBe(s + w + expectedMiddle.length);
          expect(read!.count).toBeLessThanOrEqual(Math.max(b, s + w) + pageSize - 1);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('at κ = 0.25 on 2,048 entries of pages of 16 reads 4 + 2 + 32 pages of the middle', () => {
    const random = mulberry32(9);
    const keys = Float32Array.from({ length: 2048 * 8 }, () => random() * 2 - 1);
    const bounds = pageKeyBounds(keys, 8, 16);
    const queries = Float32Array.from({ length: 16 }, () => random() * 2 - 1);
    const read = tokenKeepRead(2048, bounds, queries, 2, 0.25, DEFAULT_READ_ANCHORS, 16)!;
    expect(read.pages).toBe(Math.ceil((512 - 6) / 16)); // 32
    // page 0 holds 12 middle entries, the last page 14, every other 16: b = 512 ≤ count ≤ 518
    expect(read.count).toBeGreaterThanOrEqual(6 + 30 * 16 + 12 + 14);
    expect(read.count).toBeLessThanOrEqual(6 + 32 * 16);
  });

  it('validates the read anchors', () => {
    expect(resolveReadAnchors(undefined)).toEqual({ sinks: 4, window: 2 });
    expect(resolveReadAnchors({ window: 0 })).toEqual({ sinks: 4, window: 0 });
    expectLetheError(() => resolveReadAnchors({ sinks: -1 }), 'E_ARG', 'readAnchors.sinks');
    expectLetheError(() => resolveReadAnchors({ window: 1.5 }), 'E_ARG', 'readAnchors.window');
    expectLetheError(() => resolveReadAnchors(3 as never, 'opts'), 'E_ARG', 'opts');
  });
});

describe('ranked reads described for a device (TopPagesRead)', () => {
  it('take the anchors and the chosen pages’ middle entries, within the launch bound, for any choice', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.constantFrom(1, 4, 16),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.record({ sinks: fc.nat(8), window: fc.nat(8) }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        (live, pageSize, keepRate, anchors, seed) => {
          const read = tokenKeepRanking(live, keepRate, anchors, pageSize);
          if (read === undefined) {
            // dense exactly where the host's κ read is
            const bounds = pageKeyBounds(new Float32Array(live * 4), 4, pageSize);
            const query = new Float32Array(4);
            expect(
              tokenKeepRead(live, bounds, query, 1, keepRate, anchors, pageSize),
            ).toBeUndefined();
            return;
          }
          expect(read.pages).toBe(tokenKeepPageCount(keepRate, live, anchors, pageSize));
          const { firstPage, endPage } = candidatePages(read, pageSize);
          expect(read.pages).toBeLessThan(endPage - firstPage);
          // any choice of `pages` candidates (here a random one)
          const random = mulberry32(seed);
          const all = Array.from({ length: endPage - firstPage }, (_, i) => i);
          const chosen = Int32Array.from(
            all
              .sort(() => random() - 0.5)
              .slice(0, read.pages)
              .sort((a, b) => a - b),
          );
          const { ranges, count } = chosenPageRanges(read, live, chosen, pageSize);
          checkRanges(ranges, live, 'ranges');
          expect(rangeLength(ranges)).toBe(count);
          expect(count).toBeLessThanOrEqual(topPagesMaxRead(read, live, pageSize));
          // the anchors always, each chosen page's middle entries, nothing else
          const taken = new Uint8Array(live);
          for (let r = 0; r < ranges.length; r += 2) taken.fill(1, ranges[r]!, ranges[r + 1]!);
          const isChosen = new Set(chosen);
          const wrong: number[] = [];
          for (let i = 0; i < live; i++) {
            const page = Math.floor(i / pageSize) - firstPage;
            const anchor = i < read.sinks || i >= read.middleEnd;
            if ((taken[i] === 1) !== (anchor || isChosen.has(page))) wrong.push(i);
          }
          expect(wrong, 'entries taken that should not be, or missed').toEqual([]);
        },
      ),
      { numRuns: 300, seed: 77 },
    );
  });
});
