import { pageRanges, rangeLength, topPagesRanges } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { pageKeyBounds, pageUpperBounds, QuestSelector } from '../src/index';
import { lcg, observation, perEntry, range } from './observation';

const DIM = 4;

function randomKeys(live: number, seed: number, scale = 1): number[][] {
  const random = lcg(seed);
  return range(live).map(() => range(DIM).map(() => (random() * 2 - 1) * scale));
}

function dot(a: number[], b: number[]): number {
  return a.reduce((s, x, c) => s + x * b[c], 0);
}

/**
 * One-layer observation of `heads` KV heads (keys given per head) at `layer`, with the page key
 * bounds a cache would maintain for pages of `pageSize` (computed here by brute force).
 */
function questObservation(keys: number[][][], queryHeads: number, layer = 2, pageSize = 16) {
  const live = Math.max(...keys.map((k) => k.length));
  const rows = keys.map((k) => range(k.length));
  const maxPages = Math.ceil(live / pageSize);
  const min = new Float32Array(keys.length * maxPages * DIM);
  const max = new Float32Array(keys.length * maxPages * DIM);
  keys.forEach((head, h) => {
    for (let p = 0; p < Math.ceil(head.length / pageSize); p++) {
      const page = head.slice(p * pageSize, (p + 1) * pageSize);
      for (let c = 0; c < DIM; c++) {
        min[(h * maxPages + p) * DIM + c] = Math.min(...page.map((k) => Math.fround(k[c])));
        max[(h * maxPages + p) * DIM + c] = Math.max(...page.map((k) => Math.fround(k[c])));
      }
    }
  });
  return {
    ...observation(rows, { headDim: DIM, queryHeads, layer }),
    keys: perEntry(keys, live, DIM),
    pageKeyBounds: { pageSize, maxPages, min, max },
  };
}

describe('Quest page scores', () => {
  it('are the bound over the bounds in the observation: the keys themselves are not read', () => {
    const keys = [randomKeys(50, 1)];
    const query = Float32Array.of(0.7, -1.2, 0.1, 2);
    const obs = questObservation(keys, 1);
    const selector = new QuestSelector({ tokenBudget: 48 });
    expect(selector.needs.keys).toBe(false);
    expect(selector.needs.pageKeyBounds).toBe(true);
    const expected = pageUpperBounds(pageKeyBounds(obs.keys, DIM, 16), query);
    expect(selector.pageScores(obs, query, 0)).toEqual(expected);
    const { keys: _, ...withoutKeys } = obs;
    expect(selector.pageScores(withoutKeys, query, 0)).toEqual(expected);
    for (let p = 0; p < 4; p++) {
      for (const k of keys[0].slice(p * 16, (p + 1) * 16))
        expect(expected[p]).toBeGreaterThanOrEqual(dot([...query], k) - 1e-5);
    }
  });

  it('reduces the bounds of a GQA group by max (default) or sum', () => {
    const keys = [randomKeys(64, 2)];
    const query = Float32Array.from([1, 0, 0, 0, 0, 0, -1, 0.5]);
    const obs = questObservation(keys, 2);
    const bounds = pageKeyBounds(obs.keys.subarray(0, 64 * DIM), DIM, 16);
    const first = pageUpperBounds(bounds, query.subarray(0, DIM));
    const second = pageUpperBounds(bounds, query.subarray(DIM));
    const max = new QuestSelector({ tokenBudget: 48 }).pageScores(obs, query, 0);
    const sum = new QuestSelector({ tokenBudget: 48, groupReduce: 'sum' }).pageScores(
      obs,
      query,
      0,
    );
    for (let p = 0; p < 4; p++) {
      expect(max[p]).toBeCloseTo(Math.max(first[p], second[p]), 6);
      expect(sum[p]).toBeCloseTo(first[p] + second[p], 5);
    }
  });
});

describe('QuestSelector', () => {
  it('reads the page holding the true top-attention key, plus the newest page', () => {
    const keys = randomKeys(100, 4, 0.1);
    const query = [0.5, -0.5, 1, 0.25];
    keys[37] = query.map((x) => 3 * x); // the key the query attends to most, in page 2
    const obs = questObservation([keys], 1);
    const topKey = range(100).reduce(
      (best, i) => (dot(query, keys[i]) > dot(query, keys[best]) ? i : best),
      0,
    );
    expect(topKey).toBe(37);
    const selector = new QuestSelector({ tokenBudget: 48 });
    expect(selector.pageBudget).toBe(3);
    const pages = selector.selectPages(obs, Float32Array.from(query));
    expect(pages).toBeDefined();
    const chosen = [...pages![0]];
    expect(chosen.length).toBe(3);
    expect(chosen).toContain(Math.floor(topKey / 16));
    expect(chosen).toContain(6); // newest (partial) page
    // The third page is the best remaining bound.
    const scores = selector.pageScores(obs, Float32Array.from(query), 0);
    const rest = [0, 1, 3, 4, 5].sort((a, b) => scores[b] - scores[a]);
    expect(chosen).toEqual([2, rest[0], 6].sort((a, b) => a - b));
  });

  it('reads max(3, budget // 16) pages, densely in the first two layers and for short heads', () => {
    expect(new QuestSelector({ tokenBudget: 16 }).pageBudget).toBe(3);
    expect(new QuestSelector({ tokenBudget: 130 }).pageBudget).toBe(8);
    const selector = new QuestSelector({ tokenBudget: 64 });
    const query = Float32Array.from([1, 1, 1, 1, 1, 1, 1, 1]);
    const long = [randomKeys(200, 5), randomKeys(40, 6)];
    expect(selector.selectPages(questObservation(long, 2, 0), query)).toBeUndefined();
    expect(selector.selectPages(questObservation(long, 2, 1), query)).toBeUndefined();
    const pages = selector.selectPages(questObservation(long, 2, 2), query)!;
    expect(pages[0].length).toBe(4);
    expect([...pages[1]]).toEqual([0, 1, 2]); // 40 entries: 3 pages ≤ budget, all read
    expect(
      selector.selectPages(questObservation([randomKeys(64, 7)], 1, 5), query.subarray(0, DIM)),
    ).toBeUndefined();
  });

  it('describes as a page ranking exactly the pages it selects (the form a device cache runs)', () => {
    let compared = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const random = lcg(seed);
      const kvHeads = 1 + (seed % 2);
      const group = [1, 2, 4][seed % 3]!;
      const pageSize = [1, 4, 16][seed % 3]!;
      // a coarse grid for half the seeds: many tied page scores, which both break to the older page
      const grid = seed % 2 === 0 ? 1 : 0;
      const draw = () => {
        const x = (random() * 2 - 1) * 2;
        return grid === 0 ? x : Math.round(x);
      };
      const keys = range(kvHeads).map(() =>
        range(1 + Math.floor(random() * 200)).map(() => range(DIM).map(draw)),
      );
      const query = Float32Array.from(range(kvHeads * group * DIM).map(draw));
      const observed = questObservation(keys, kvHeads * group, 2, pageSize);
      const selector = new QuestSelector({
        tokenBudget: pageSize * (1 + Math.floor(random() * 8)),
        pageSize,
        minPages: 1,
        groupReduce: seed % 4 < 2 ? 'max' : 'sum',
      });
      const pages = selector.selectPages(observed, query);
      const ranking = selector.pageRanking(2, observed.liveCounts);
      expect(ranking === undefined, `seed ${seed}`).toBe(pages === undefined);
      if (pages === undefined || ranking === undefined) continue;
      expect(ranking.reduce).toBe(selector.groupReduce);
      keys.forEach((head, h) => {
        const live = head.length;
        const expected = pageRanges(pages[h]!, live, pageSize);
        const read = ranking.heads[h];
        if (read === undefined) {
          // a dense head: every page selected
          expect(rangeLength(expected), `seed ${seed} head ${h}`).toBe(live);
          return;
        }
        const { maxPages, min, max } = observed.pageKeyBounds;
        const at = h * maxPages * DIM;
        const bounds = {
          pages: Math.ceil(live / pageSize),
          min: min.subarray(at, at + maxPages * DIM),
          max: max.subarray(at, at + maxPages * DIM),
        };
        const own = query.subarray(h * group * DIM, (h + 1) * group * DIM);
        const ranked = topPagesRanges(read, live, bounds, own, group, ranking.reduce, pageSize);
        expect(Array.from(ranked.ranges), `seed ${seed} head ${h}`).toEqual(Array.from(expected));
        compared++;
      });
    }
    expect(compared).toBeGreaterThan(40);
  });

  it('validates its options and inputs', () => {
    expectLetheError(() => new QuestSelector({ tokenBudget: 0 }), 'E_BUDGET', 'tokenBudget');
    expectLetheError(() => new QuestSelector({ tokenBudget: 12.5 }), 'E_BUDGET', 'tokenBudget');
    expectLetheError(
      () => new QuestSelector({ tokenBudget: 64, pageSize: 0 }),
      'E_ARG',
      'pageSize',
    );
    expectLetheError(
      () => new QuestSelector({ tokenBudget: 64, groupReduce: 'mean' as 'max' }),
      'E_ARG',
      'groupReduce',
    );
    const selector = new QuestSelector({ tokenBudget: 48 });
    const obs = questObservation([randomKeys(100, 8)], 1);
    expectLetheError(() => selector.selectPages(obs, new Float32Array(3)), 'E_SHAPE', 'query');
    expectLetheError(
      () => selector.selectPages(obs, Float32Array.from([1, Number.NaN, 0, 0])),
      'E_ARG',
      'query',
    );
    const { pageKeyBounds: _, ...withoutBounds } = obs;
    expectLetheError(
      () => selector.selectPages(withoutBounds, new Float32Array(DIM)),
      'E_ARG',
      'observation.pageKeyBounds',
    );
    const otherPages = questObservation([randomKeys(100, 8)], 1, 2, 8);
    expectLetheError(
      () => selector.selectPages(otherPages, new Float32Array(DIM)),
      'E_ARG',
      'observation.pageKeyBounds',
    );
  });
});
