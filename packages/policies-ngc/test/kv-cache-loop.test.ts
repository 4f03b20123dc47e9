import { blockCount, KVCache } from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import { describe, expect, it } from 'vitest';
import { isNgcDecision, NgcPolicy, type NgcPolicyOptions, ngcKeptBlocks } from '../src/index';

const GEOMETRY = { layers: 2, kvHeads: 2, headDim: 8, pageSize: 4 };
const QUERY_HEADS = 4;

/** One eviction round as the loop saw it. */
interface Round {
  layer: number;
  /** Cache length (tokens appended) when the round ran. */
  step: number;
  before: number;
  after: number;
  blocks: number;
  order: number[];
  keptPositions: number[];
}

/**
 * Drives a real KVCache without a model, the way the runtime does: a prompt of `prefill` tokens
 * appended at once (its tokens count towards the cadence), then one token per step; after each
 * append, every layer whose trigger fires observes, selects and keeps.
 */
function run(options: NgcPolicyOptions, prefill: number, steps: number, seed: number) {
  const policy = new NgcPolicy(options);
  const cache = new KVCache({
    geometry: GEOMETRY,
    queryHeads: QUERY_HEADS,
    anchors: policy.anchors,
    queryWindow: policy.needs.attentionWindow,
  });
  const rng = new Rng(seed);
  const data = new Rng(seed + 1000);
  const width = GEOMETRY.kvHeads * GEOMETRY.headDim;
  const since = new Int32Array(GEOMETRY.layers);
  const rounds: Round[] = [];
  const feed = (from: number, count: number) => {
    const positions = Int32Array.from({ length: count }, (_, i) => from + i);
    for (let layer = 0; layer < GEOMETRY.layers; layer++) {
      cache.append(layer, data.normal(count * width), data.normal(count * width), positions);
      cache.recordQueries(layer, data.normal(count * QUERY_HEADS * GEOMETRY.headDim), positions);
      since[layer] += count;
      const liveCounts = cache.liveCounts(layer);
      const context = {
        layer,
        step: cache.length(layer),
        liveCounts,
        sinceLastRound: since[layer]!,
      };
      if (!policy.shouldEvict(context)) continue;
      const observation = cache.observe(layer, policy.needs);
      const decision = policy.select(observation, rng);
      expect(isNgcDecision(decision)).toBe(true);
      const keptPositions = [...decision.keep].map((i) => observation.positions[i]!);
      cache.keep(layer, decision);
      since[layer] = 0;
      const after = cache.liveCounts(layer);
      expect(after[0]).toBe(after[1]); // one keep set for both KV heads
      const live = cache.observe(layer, { ...policy.needs, attentionWindow: 0 });
      expect([...live.positions.subarray(0, live.liveCounts[0])]).toEqual(keptPositions);
      rounds.push({
        layer,
        step: cache.length(layer),
        before: liveCounts[0]!,
        after: after[0]!,
        blocks: decision.blocks,
        order: [...decision.order],
        keptPositions,
      });
    }
  };
  feed(0, prefill);
  for (let t = prefill; t < prefill + steps; t++) feed(t, 1);
  return { rounds, cache };
}

/** The paper's real-valued recursion c_{t+1} = (1 − ε) c_t + δ from c_1 = δ. */
function paperRecursion(delta: number, rate: number, rounds: number): number[] {
  const sizes = [delta];
  while (sizes.length < rounds) sizes.push((1 - rate) * sizes[sizes.length - 1]! + delta);
  return sizes;
}

describe('NgcPolicy driving a KVCache (grow-then-evict, NGC App. A.2)', () => {
  it('block-aligned: pre-round sizes follow the block recursion exactly and reach δ/ε', () => {
    // b = 4, δ = 16, ε = 0.5: every size is a multiple of b, so rounds keep exactly K·b entries.
    const options: NgcPolicyOptions = { evictionRate: 0.5, cadence: 16, blockSize: 4, window: 5 };
    const { rounds } = run(options, 0, 16 * 12, 1);
    for (let layer = 0; layer < GEOMETRY.layers; layer++) {
      const mine = rounds.filter((r) => r.layer === layer);
      expect(mine.length).toBe(12);
      const expected = [16];
      while (expected.length < mine.length) {
        const c = expected[expected.length - 1]!;
        expected.push(4 * ngcKeptBlocks(0.5, c / 4) + 16);
      }
      expect(mine.map((r) => r.before)).toEqual(expected);
      expect(expected.slice(0, 5)).toEqual([16, 24, 28, 32, 32]);
      expect(mine.at(-1)!.before).toBe(16 / 0.5);
      // Within one block of the paper's real-valued recursion at every round.
      const paper = paperRecursion(16, 0.5, mine.length);
      mine.forEach((r, t) => {
        expect(Math.abs(r.before - paper[t]!)).toBeLessThanOrEqual(4);
      });
      // Rounds at every δ-th token: cache lengths 16, 32, 48, …
      expect(mine.map((r) => r.step)).toEqual(mine.map((_, t) => 16 * (t + 1)));
    }
  });

  it.each([
    ['greedy', 0],
    ['sample', 0],
    ['sample', 7], // a prompt shorter than δ, appended at once
    ['greedy', 30], // a prompt longer than δ: the first round fires right after it
  ] as const)(
    'short blocks (b = 5, δ = 12, ε = 0.3), %s mode, prefill %i: recursion up to block rounding',
    (mode, prefill) => {
      const b = 5;
      const delta = 12;
      const rate = 0.3;
      const options: NgcPolicyOptions = {
        evictionRate: rate,
        cadence: delta,
        blockSize: b,
        window: 4,
        mode,
      };
      const steps = 400;
      const { rounds } = run(options, prefill, steps, 2);
      const first = rounds[0]!;
      expect(first.step).toBe(Math.max(delta, prefill));
      for (let layer = 0; layer < GEOMETRY.layers; layer++) {
        const mine = rounds.filter((r) => r.layer === layer);
        mine.forEach((r, t) => {
          // Blocks and keep count of eq. 2's action.
          expect(r.blocks).toBe(blockCount(r.before, b));
          expect(r.order.length).toBe(ngcKeptBlocks(rate, r.blocks));
          // Kept entries: (1 − ε)·c up to block rounding, (1 − ε)c − b < kept < (1 − ε)c + 2b.
          expect(r.after).toBeGreaterThan((1 - rate) * r.before - b);
          expect(r.after).toBeLessThan((1 - rate) * r.before + 2 * b);
          // Between rounds the cache grows by exactly δ.
          if (t > 0) expect(r.before).toBe(mine[t - 1]!.after + delta);
        });
        // The pre-round size stays in the band the bounds allow around δ/ε = 40.
        for (const r of mine.slice(-10)) {
          expect(r.before).toBeGreaterThan(delta / rate - b / rate);
          expect(r.before).toBeLessThan(delta / rate + (2 * b) / rate);
        }
      }
    },
  );

  it('sample mode is reproducible per seed and differs across seeds', () => {
    const options: NgcPolicyOptions = {
      evictionRate: 0.5,
      cadence: 8,
      blockSize: 2,
      window: 4,
      mode: 'sample',
    };
    const a = run(options, 0, 120, 5).rounds;
    const b = run(options, 0, 120, 5).rounds;
    const c = run(options, 0, 120, 6).rounds;
    expect(a).toEqual(b);
    expect(a.map((r) => r.keptPositions)).not.toEqual(c.map((r) => r.keptPositions));
  });

  it('ε = 1 empties the layer every round', () => {
    const { rounds, cache } = run(
      { evictionRate: 1, cadence: 8, blockSize: 4, window: 2 },
      0,
      40,
      3,
    );
    for (const r of rounds) {
      expect(r.before).toBe(8);
      expect(r.after).toBe(0);
    }
    expect([...cache.liveCounts(0)]).toEqual([0, 0]);
  });
});
