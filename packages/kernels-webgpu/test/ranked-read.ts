import {
  type KVCache,
  type PageRanking,
  type QuestGroupReduce,
  questPageScores,
  type TopPagesRead,
  tokenKeepRanking,
  topPagesRanges,
} from '@lethe/kv-cache';
import { expect } from 'vitest';
import { Usage } from '../src/device/usage';
import {
  createGpuBuffer,
  DeviceKVCache,
  destroyGpuBuffer,
  deviceCounters,
  readBack,
} from '../src/index';
import { stepRows } from './step-rows';

/** A random ranked read of each KV head: Quest's (the newest page whole) or SOL κ's. */
export function rankingOf(
  live: Int32Array,
  kind: 'quest' | 'kappa',
  pageSize: number,
  reduce: QuestGroupReduce,
  random: () => number,
): PageRanking {
  const heads = Array.from(live, (n): TopPagesRead | undefined => {
    if (kind === 'kappa') {
      const anchors = { sinks: Math.floor(random() * 6), window: Math.floor(random() * 4) };
      return tokenKeepRanking(n, 0.05 + 0.9 * random(), anchors, pageSize);
    }
    const pages = Math.ceil(n / pageSize);
    const budget = 1 + Math.floor(random() * pages);
    return pages <= budget
      ? undefined
      : { sinks: 0, middleEnd: (pages - 1) * pageSize, pages: budget - 1 };
  });
  return { reduce, heads };
}

/** The host's run of a ranking over its own cache: per head the ranges and count, or none. */
export function hostReads(host: KVCache, ranking: PageRanking, queries: Float32Array) {
  const { pageSize, headDim } = host.geometry;
  const group = host.queryHeads / host.geometry.kvHeads;
  const live = host.liveCounts(0);
  return ranking.heads.map((read, h) => {
    if (read === undefined) return undefined;
    const own = queries.subarray(h * group * headDim, (h + 1) * group * headDim);
    const bounds = host.pageKeyBounds(0, h);
    return topPagesRanges(read, live[h]!, bounds, own, group, ranking.reduce, pageSize);
  });
}

/**
 * Whether a ranked read's choice is decided by a margin: the `pages`-th and the next best
 * candidate scores (host float32) differ by more than `1e-4` of the largest magnitude.
 */
export function decisive(host: KVCache, ranking: PageRanking, queries: Float32Array): boolean {
  const { pageSize, headDim } = host.geometry;
  const group = host.queryHeads / host.geometry.kvHeads;
  return ranking.heads.every((read, h) => {
    if (read === undefined || read.pages === 0) return true;
    const own = queries.subarray(h * group * headDim, (h + 1) * group * headDim);
    const first = Math.floor(read.sinks / pageSize);
    const end = Math.ceil(read.middleEnd / pageSize);
    const bounds = host.pageKeyBounds(0, h);
    const scores = Array.from(questPageScores(bounds, own, group, ranking.reduce, first, end)).sort(
      (a, b) => b - a,
    );
    if (read.pages >= scores.length) return true;
    const scale = Math.max(...scores.map(Math.abs), 1e-30);
    return scores[read.pages - 1]! - scores[read.pages]! > 1e-4 * scale;
  });
}

/**
 * Attends one decode token of `cache`'s layer 0 twice from a step's rows (the token in row 1 of
 * 2): with `ranking` ranked on the device, and with the ranges the host chose (`expected`, from
 * {@link hostReads}); and ranked from uploaded queries and chunk (`attendBatch`, counts into a
 * buffer of the test's). Expects the same output bit for bit — the same entries read — and each
 * ranked head's read count to be the host's.
 */
export async function compareRanked(
  device: GPUDevice,
  cache: DeviceKVCache,
  expected: ReturnType<typeof hostReads>,
  ranking: PageRanking,
  token: {
    readonly queries: Float32Array;
    readonly queryPositions: Int32Array;
    readonly chunk?: { readonly keys: Float32Array; readonly values: Float32Array };
  },
): Promise<void> {
  const { kvHeads, headDim } = cache.geometry;
  const queryHeads = cache.queryHeads;
  const rows = stepRows(device, { queryHeads, kvHeads, headDim }, [token], [1], 2);
  try {
    const part = (extra: object) => ({
      cache,
      request: { queryPositions: token.queryPositions, firstRow: 1, ...extra },
    });
    const bytes = 4 * queryHeads * headDim;
    const start = deviceCounters().uploadedBytes;
    const ranked = DeviceKVCache.attendRows(0, [part({ ranking })], rows);
    const middle = deviceCounters().uploadedBytes;
    const given = DeviceKVCache.attendRows(
      0,
      [part({ ranges: expected.map((read) => read?.ranges) })],
      rows,
    );
    // the ranked launch uploads its ranking words (9 per head) and, when it ranks, the ranking
    // pass's parameters (32 B) — not the triples the given ranges upload nor the slots the
    // ranking pass fills
    const rankedHeads = expected.filter((read) => read !== undefined);
    const givenTriples = rankedHeads.reduce((sum, read) => sum + read!.ranges.length / 2, 0);
    expect(middle - start).toBe(
      deviceCounters().uploadedBytes -
        middle +
        (rankedHeads.length > 0 ? 32 : 0) +
        36 * rankedHeads.length -
        12 * givenTriples,
    );
    const counts = createGpuBuffer(
      device,
      4 * (3 + kvHeads),
      Usage.STORAGE | Usage.COPY_SRC,
      'test read counts',
    );
    const uploaded = DeviceKVCache.attendBatch(0, [
      { cache, request: { ...token, ranking, readCounts: { buffer: counts, offset: 3 } } },
    ]);
    const got = new Float32Array(await readBack(device, ranked, bytes));
    const want = new Float32Array(await readBack(device, given, bytes));
    const fromUploads = new Float32Array(await readBack(device, uploaded, bytes));
    const flags = new Uint32Array(await readBack(device, rows.flags, rows.flags.size));
    const written = new Uint32Array(await readBack(device, counts, counts.size));
    for (const buffer of [ranked, given, uploaded, counts]) destroyGpuBuffer(buffer);
    expect(Array.from(got)).toEqual(Array.from(want));
    expect(Array.from(fromUploads)).toEqual(Array.from(want));
    expected.forEach((read, h) => {
      expect(flags[rows.readCountSlot(0, 1, h)], `head ${h}`).toBe(read?.count ?? 0);
      expect(written[3 + h], `head ${h}`).toBe(read?.count ?? 0);
    });
  } finally {
    rows.dispose();
  }
}
