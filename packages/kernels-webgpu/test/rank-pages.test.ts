import type { QuestGroupReduce } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { mulberry32 } from '@lethe/test-utils/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceKVCache } from '../src/index';
import { buildCase, type Case } from './attention-case';
import { compareRanked, decisive, hostReads, rankingOf } from './ranked-read';
import { stepRows } from './step-rows';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

const rankArbitrary = fc.record({
  kvHeads: fc.constantFrom(1, 2),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 16, 32, 64, 128),
  pageSize: fc.constantFrom(1, 4, 16),
  before: fc.integer({ min: 1, max: 600 }),
  chunk: fc.constantFrom(1, 7, 64),
  keep: fc.double({ min: 0.2, max: 1, noNaN: true }),
  after: fc.integer({ min: 1, max: 40 }),
  truncate: fc.integer({ min: 0, max: 12 }),
  kind: fc.constantFrom('quest' as const, 'kappa' as const),
  reduce: fc.constantFrom('max' as const, 'sum' as const),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
  grid: fc.constantFrom(0.125, 1),
});

type RankDraw = typeof rankArbitrary extends fc.Arbitrary<infer T> ? T : never;

describe.skipIf(skipWebGpu)('ranked reads: Quest page bounds and top-k on the device', () => {
  const block = deviceForBlock();

  /**
   * Runs one case: its ranked read on the device from a step's rows (the token in row 1 of 2)
   * and the same read with the ranges the host's `topPagesRanges` chose, over the same pages.
   */
  async function rankCase(
    c: Case,
    kind: 'quest' | 'kappa',
    reduce: QuestGroupReduce,
    requireDecisive: boolean,
  ): Promise<'skipped' | 'tied' | 'checked'> {
    const { cache, host, request } = buildCase(block.device, c);
    try {
      const random = mulberry32(c.seed ^ 0x5eed);
      const ranking = rankingOf(host.liveCounts(0), kind, c.pageSize, reduce, random);
      const decided = decisive(host, ranking, request.queries);
      if (requireDecisive && !decided) return 'skipped';
      const expected = hostReads(host, ranking, request.queries);
      await compareRanked(block.device, cache, expected, ranking, request);
      return decided ? 'checked' : 'tied';
    } finally {
      cache.dispose();
    }
  }

  const caseOf = (r: RankDraw, grid: number | undefined): Case => ({
    ...r,
    gated: false,
    queries: 1,
    sparse: false,
    biased: false,
    chunked: true,
    spread: 4,
    pageBounds: true,
    grid,
  });

  it('chooses the pages the host chooses, ties to the older page, on exact bounds (fast-check)', async () => {
    let tied = 0;
    await fc.assert(
      fc.asyncProperty(rankArbitrary, async (r) => {
        const spread = r.grid === 1 ? 2 : 4;
        const outcome = await rankCase({ ...caseOf(r, r.grid), spread }, r.kind, r.reduce, false);
        if (outcome === 'tied') tied++;
      }),
      { numRuns: 60, seed: 311 },
    );
    // the coarse grid ties pages at the choice's boundary: the order of ties was checked
    expect(tied).toBeGreaterThan(5);
  }, 300_000);

  it('chooses the host’s pages wherever a margin decides them, on any floats (fast-check)', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(rankArbitrary, async (r) => {
        const outcome = await rankCase(caseOf(r, undefined), r.kind, r.reduce, true);
        if (outcome === 'checked') checked++;
      }),
      { numRuns: 40, seed: 312 },
    );
    expect(checked).toBeGreaterThan(20);
  }, 300_000);

  it('ranks an 8k context under Quest and κ after evictions and a truncation', async () => {
    const long: Case = {
      kvHeads: 2,
      group: 4,
      headDim: 64,
      pageSize: 16,
      before: 8192,
      chunk: 1024,
      keep: 0.9,
      after: 500,
      truncate: 10,
      seed: 8,
      gated: false,
      queries: 1,
      sparse: false,
      biased: false,
      chunked: true,
      spread: 4,
      pageBounds: true,
      grid: 0.125,
    };
    expect(await rankCase(long, 'quest', 'max', false)).not.toBe('skipped');
    expect(await rankCase({ ...long, seed: 9 }, 'kappa', 'max', false)).not.toBe('skipped');
  }, 300_000);

  it('names a ranked read it cannot run', () => {
    const geometry = { layers: 1, kvHeads: 2, headDim: 4, pageSize: 4 };
    const bounded = new DeviceKVCache({ geometry, queryHeads: 2, pageBounds: true }, block.device);
    const plain = new DeviceKVCache({ geometry, queryHeads: 2 }, block.device);
    const keys = new Float32Array(10 * 2 * 4).fill(0.5);
    const positions = Int32Array.from({ length: 10 }, (_, i) => i);
    bounded.append(0, keys, keys, positions);
    plain.append(0, keys, keys, positions);
    const queries = new Float32Array(2 * 2 * 4).fill(0.25);
    const chunk = { keys: new Float32Array(2 * 2 * 4), values: new Float32Array(2 * 2 * 4) };
    const rows = stepRows(
      block.device,
      { queryHeads: 2, kvHeads: 2, headDim: 4 },
      [{ queries, chunk }],
      [0],
      2,
    );
    const read = { sinks: 0, middleEnd: 8, pages: 1 };
    /** Expects the attention of `cache` with `request` (over the token in row 0) refused. */
    const refused = (cache: DeviceKVCache, request: object, code: string, argument: string) =>
      expectLetheError(
        () =>
          DeviceKVCache.attendRows(
            0,
            [{ cache, request: { queryPositions: Int32Array.of(10), firstRow: 0, ...request } }],
            rows,
          ),
        code,
        argument,
      );
    const ranking = { reduce: 'max', heads: [read, undefined] };
    try {
      refused(plain, { ranking }, 'E_STATE', 'parts[0].ranking');
      refused(
        bounded,
        { ranking, ranges: [Int32Array.of(0, 4), undefined] },
        'E_ARG',
        'parts[0].ranking.heads[0]',
      );
      refused(
        bounded,
        { ranking: { reduce: 'max', heads: [{ sinks: 9, middleEnd: 8, pages: 1 }, undefined] } },
        'E_ARG',
        'parts[0].ranking.heads[0]',
      );
      refused(
        bounded,
        { ranking: { ...ranking, reduce: 'mean' } },
        'E_ARG',
        'parts[0].ranking.reduce',
      );
      refused(
        bounded,
        { ranking: { reduce: 'max', heads: [read] } },
        'E_SHAPE',
        'parts[0].ranking.heads',
      );
      refused(
        bounded,
        { queryPositions: Int32Array.of(10, 11), ranking },
        'E_ARG',
        'parts[0].ranking',
      );
    } finally {
      rows.dispose();
      bounded.dispose();
      plain.dispose();
    }
  });
});
