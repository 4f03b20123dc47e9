import { Rng } from '@lethe/core';
import { type EvictionPolicy, KVCache, PolicyRegistry } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { HEURISTIC_PROVIDERS, pageKeyBounds, pageUpperBounds, QuestSelector } from '../src/index';
import { range } from './observation';

const GEOMETRY = { layers: 1, kvHeads: 2, headDim: 8, pageSize: 16 };
const QUERY_HEADS = 4;
const CAPACITY = 24;
const STEPS = 120;

/** The heuristics that evict (all but Quest, a read selector): what a capacity builds. */
const EVICTING = HEURISTIC_PROVIDERS.filter((p) => p.budgetForms === undefined).map((p) => p.name);

/** Runs a decode-style loop: append, record the query, evict when the policy's trigger fires. */
function run(policy: EvictionPolicy, seed: number) {
  const cache = new KVCache({
    geometry: GEOMETRY,
    queryHeads: QUERY_HEADS,
    anchors: policy.anchors,
    queryWindow: policy.needs.attentionWindow,
    trackAttention: policy.needs.accumulatedAttention,
  });
  const rng = new Rng(seed);
  const width = GEOMETRY.kvHeads * GEOMETRY.headDim;
  let sinceLastRound = 0;
  let rounds = 0;
  for (let t = 0; t < STEPS; t++) {
    const positions = Int32Array.of(t);
    cache.append(0, rng.normal(width), rng.normal(width), positions);
    cache.recordQueries(0, rng.normal(QUERY_HEADS * GEOMETRY.headDim), positions);
    sinceLastRound += 1;
    const context = { layer: 0, step: t + 1, liveCounts: cache.liveCounts(0), sinceLastRound };
    if (policy.shouldEvict(context)) {
      cache.keep(0, policy.select(cache.observe(0, policy.needs), rng));
      sinceLastRound = 0;
      rounds += 1;
    }
    for (const live of cache.liveCounts(0)) expect(live).toBeLessThanOrEqual(CAPACITY);
  }
  const observation = cache.observe(0, {
    ...policy.needs,
    attentionWindow: 0,
    accumulatedAttention: false,
  });
  return { rounds, positions: [...observation.positions], liveCounts: [...observation.liveCounts] };
}

describe('heuristics driving a KVCache', () => {
  it('has every heuristic but Quest evict', () => {
    expect(HEURISTIC_PROVIDERS.map((p) => p.name).filter((n) => !EVICTING.includes(n))).toEqual([
      'quest',
    ]);
  });

  it.each(EVICTING)(
    '%s stays within capacity, keeps its anchors and is deterministic',
    async (name) => {
      const registry = new PolicyRegistry(HEURISTIC_PROVIDERS);
      const prepared = await registry.prepare(name, {
        options: name === 'snapkv' ? { windowSize: 8 } : {},
      });
      const policy = prepared.build(
        { capacity: CAPACITY },
        {
          model: { layers: 1, kvHeads: 2, queryHeads: QUERY_HEADS, headDim: 8, hiddenSize: 32 },
          sequences: 1,
        },
      ).eviction!;
      const first = run(policy, 3);
      // The capacity is a ceiling: rounds leave CAPACITY − 1 entries, from the CAPACITY-th token on.
      expect(first.rounds).toBe(STEPS - CAPACITY + 1);
      expect(first.liveCounts).toEqual([CAPACITY - 1, CAPACITY - 1]);
      const maxLive = CAPACITY - 1;
      for (let h = 0; h < GEOMETRY.kvHeads; h++) {
        const row = first.positions.slice(h * maxLive, (h + 1) * maxLive);
        for (let p = 0; p < policy.anchors.sinks; p++) expect(row).toContain(p);
        for (let p = STEPS - policy.anchors.window; p < STEPS; p++) expect(row).toContain(p);
        if (name === 'streaming-llm')
          expect(row).toEqual([0, 1, 2, 3, ...Array.from({ length: 19 }, (_, i) => 101 + i)]);
      }
      expect(run(policy, 3)).toEqual(first);
    },
  );

  it('Quest selects pages from a live cache', () => {
    const cache = new KVCache({ geometry: GEOMETRY, queryHeads: QUERY_HEADS });
    const rng = new Rng(9);
    const width = GEOMETRY.kvHeads * GEOMETRY.headDim;
    for (let t = 0; t < 100; t++)
      cache.append(0, rng.normal(width), rng.normal(width), Int32Array.of(t));
    const quest = new QuestSelector({ tokenBudget: 48, denseLayers: 0 });
    const pages = quest.selectPages(
      cache.observe(0, quest.needs),
      rng.normal(QUERY_HEADS * GEOMETRY.headDim),
    );
    expect(pages?.map((p) => p.length)).toEqual([3, 3]);
    for (const p of pages ?? []) expect(p[p.length - 1]).toBe(6);
  });

  it("Quest's bounds follow evictions: scores equal the bound recomputed from the live keys", () => {
    const cache = new KVCache({ geometry: GEOMETRY, queryHeads: QUERY_HEADS });
    const rng = new Rng(10);
    const width = GEOMETRY.kvHeads * GEOMETRY.headDim;
    const quest = new QuestSelector({ tokenBudget: 48, denseLayers: 0 });
    const group = QUERY_HEADS / GEOMETRY.kvHeads;
    for (let t = 0; t < 120; t++) {
      cache.append(0, rng.normal(width), rng.normal(width), Int32Array.of(t));
      if (t % 17 === 16) {
        // evict every third live entry of head 0 and every other of head 1: pages reshuffle
        const live = cache.liveCounts(0);
        cache.keep(0, {
          granularity: 'head',
          keep: [0, 1].map((h) =>
            Int32Array.from({ length: live[h] }, (_, i) => i).filter((i) => i % (h + 2) !== 0),
          ),
        });
      }
      const query = rng.normal(QUERY_HEADS * GEOMETRY.headDim);
      const observation = cache.observe(0, { ...quest.needs, keys: true });
      for (let h = 0; h < GEOMETRY.kvHeads; h++) {
        const { headDim, maxLive } = observation;
        const keys = observation.keys!.subarray(
          h * maxLive * headDim,
          (h * maxLive + observation.liveCounts[h]) * headDim,
        );
        const bounds = pageKeyBounds(keys, headDim, quest.pageSize);
        const perHead = range(group).map((g) =>
          pageUpperBounds(
            bounds,
            query.subarray((h * group + g) * headDim, (h * group + g + 1) * headDim),
          ),
        );
        const expected = Float32Array.from({ length: bounds.pages }, (_, p) =>
          Math.max(...perHead.map((scores) => scores[p])),
        );
        expect(quest.pageScores(observation, query, h)).toEqual(expected);
      }
    }
  });
});
