import { blockCount, expandBlocks, type KeepDecision, NO_NEEDS } from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blockLogits,
  gumbelTopKLogProb,
  isNgcDecision,
  NGC_DEFAULT_BLOCK_SIZE,
  NGC_DEFAULT_WINDOW,
  NgcPolicy,
  type NgcPolicyOptions,
  ngcKeptBlocks,
} from '../src/index';
import { attentionObservation, NO_RANDOM, range, scoredObservation } from './helpers';

const context = (sinceLastRound: number) => ({
  layer: 0,
  step: 100,
  liveCounts: Int32Array.of(50),
  sinceLastRound,
});

describe('NgcPolicy options', () => {
  it('has the paper defaults, needs the window, protects nothing', () => {
    const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 64 });
    expect(policy.name).toBe('ngc');
    expect(policy.blockSize).toBe(NGC_DEFAULT_BLOCK_SIZE);
    expect(policy.blockSize).toBe(32);
    expect(policy.window).toBe(NGC_DEFAULT_WINDOW);
    expect(policy.window).toBe(5);
    expect(policy.mode).toBe('greedy');
    expect(policy.logits).toEqual({ kind: 'log', temperature: 1 });
    expect(policy.needs).toEqual({ ...NO_NEEDS, attentionWindow: 5 });
    expect(policy.anchors).toEqual({ sinks: 0, window: 0 });
  });

  it('names the bad argument', () => {
    const base: NgcPolicyOptions = { evictionRate: 0.5, cadence: 16 };
    const cases: [Record<string, unknown>, string][] = [
      [{ evictionRate: 0 }, 'evictionRate'],
      [{ evictionRate: -0.1 }, 'evictionRate'],
      [{ evictionRate: 1.01 }, 'evictionRate'],
      [{ evictionRate: Number.NaN }, 'evictionRate'],
      [{ evictionRate: '0.5' }, 'evictionRate'],
      [{ cadence: 0 }, 'cadence'],
      [{ cadence: 2.5 }, 'cadence'],
      [{ blockSize: 0 }, 'blockSize'],
      [{ blockSize: 1.5 }, 'blockSize'],
      [{ window: 0 }, 'window'],
      [{ window: 17 }, 'window'], // > cadence
      [{ cadence: 4 }, 'window'], // default w = 5 > δ = 4
      [{ logits: { kind: 'log', temperature: 0 } }, 'logits'],
      [{ logits: { kind: 'softmax' } }, 'logits'],
      [{ mode: 'beam' }, 'mode'],
    ];
    for (const [override, argument] of cases) {
      expectLetheError(
        () => new NgcPolicy({ ...base, ...override } as NgcPolicyOptions),
        'E_ARG',
        argument,
      );
    }
    expect(() => new NgcPolicy({ ...base, window: 16 })).not.toThrow();
    expect(() => new NgcPolicy({ evictionRate: 1, cadence: 1, window: 1 })).not.toThrow();
  });

  it('takes exactly one schedule, and a keep count of at least one block', () => {
    expectLetheError(
      () => new NgcPolicy({ evictionRate: 0.5, cadence: 8, keepCount: 8 } as never),
      'E_ARG',
      'options',
    );
    expectLetheError(() => new NgcPolicy({} as never), 'E_ARG', 'options');
    // A provider's ceiling is no schedule: `capacity` is refused, alone or beside a keep count.
    for (const options of [{ capacity: 8 }, { capacity: 8, keepCount: 7 }]) {
      const error = expectLetheError(() => new NgcPolicy(options as never), 'E_ARG', 'options');
      expect(error.message).toContain('keepCount');
    }
    expectLetheError(() => new NgcPolicy({ keepCount: 0 }), 'E_ARG', 'keepCount');
    expectLetheError(() => new NgcPolicy({ keepCount: 8, slack: -1 }), 'E_ARG', 'slack');
    expectLetheError(() => new NgcPolicy({ keepCount: 3, blockSize: 4 }), 'E_BUDGET', 'keepCount');
    // The window may exceed a cadence only under the keep-count schedule (no cadence there).
    expect(() => new NgcPolicy({ keepCount: 8, blockSize: 2, window: 40 })).not.toThrow();
  });
});

describe('NgcPolicy keep-count schedule', () => {
  it('evicts once a head exceeds keepCount + slack and keeps ⌊keepCount / b⌋ whole blocks', () => {
    const policy = new NgcPolicy({ keepCount: 7, slack: 2, blockSize: 2, window: 1 });
    const context = (live: number) => ({
      layer: 0,
      step: live,
      liveCounts: Int32Array.of(live, live),
      sinceLastRound: 1,
    });
    expect(policy.shouldEvict(context(9))).toBe(false);
    expect(policy.shouldEvict(context(10))).toBe(true);
    const live = 10;
    const row = range(live).map((i) => (i + 1) / 55);
    const decision = policy.select(
      attentionObservation([range(live), range(live)], [[row, row]]),
      NO_RANDOM,
    );
    // The three best blocks of two: the newest (highest attention) ones.
    expect([...decision.order]).toEqual([4, 3, 2]);
    expect([...decision.keep]).toEqual([4, 5, 6, 7, 8, 9]);
  });
});

describe('NgcPolicy trigger', () => {
  it('fires once at least δ tokens entered the layer since its last round', () => {
    const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 16 });
    expect(policy.shouldEvict(context(0))).toBe(false);
    expect(policy.shouldEvict(context(15))).toBe(false);
    expect(policy.shouldEvict(context(16))).toBe(true);
    expect(policy.shouldEvict(context(40))).toBe(true); // a long prefill chunk
  });
});

describe('ngcKeptBlocks (K = N − ⌊ε·N⌋)', () => {
  it.each([
    [0.5, 3, 2],
    [0.5, 4, 2],
    [0.5, 1, 1],
    [1, 3, 0],
    [1, 1, 0],
    [0.999, 1, 1],
    [0.3, 10, 7],
    [0.7, 10, 3], // 0.7 · 10 = 7.000000000000001
    [0.1 * 3, 10, 7], // 0.30000000000000004 · 10
    [0.25, 7, 6],
    [0.5, 0, 0],
  ])('ε = %f, N = %i keeps %i', (rate, blocks, kept) => {
    expect(ngcKeptBlocks(rate, blocks)).toBe(kept);
  });

  it('equals N − ⌊p·N/q⌋ in exact integers for ε = p/q (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 500 }),
        (q, pRaw, blocks) => {
          const p = 1 + (pRaw % q);
          expect(ngcKeptBlocks(p / q, blocks)).toBe(blocks - Math.floor((p * blocks) / q));
        },
      ),
    );
  });
});

describe('NgcPolicy.select', () => {
  /** Scores whose block means are `blockMeans` (blocks of `b`, the last one `lastSize` long). */
  function blockScoresObservation(blockMeans: number[], b: number, lastSize = b) {
    const scores = blockMeans.flatMap((m, j) =>
      new Array(j === blockMeans.length - 1 ? lastSize : b).fill(m),
    );
    return scoredObservation(scores);
  }

  it.each([
    // live, b, ε, kept blocks, kept entries (greedy keeps the best blocks; the last is the best)
    [96, 32, 0.5, 2, 64],
    [100, 32, 0.5, 2, 36], // N = 4, last block of 4 entries is the best → 32 + 4
    [70, 32, 0.5, 2, 38], // N = 3: blocks of 32, 32, 6 → best two are 6 and 32
    [64, 32, 1, 0, 0],
    [5, 32, 0.9, 1, 5], // one short block survives any ε < 1
    [10, 3, 0.25, 3, 7], // N = 4, evict ⌊1⌋ → keep 3: blocks 3 (1 entry), 2, 1 → 1 + 3 + 3
    [0, 32, 0.5, 0, 0],
  ])('live %i, b %i, ε %f → %i blocks, %i entries', (live, b, rate, keptBlocks, keptEntries) => {
    const blocks = blockCount(live, b);
    // Block means increasing with the index, so greedy keeps the newest blocks.
    const means = range(blocks).map((j) => (j + 1) / 1000);
    const lastSize = live - (blocks - 1) * b;
    const observation =
      live === 0 ? attentionObservation([[]], [[[]]]) : blockScoresObservation(means, b, lastSize);
    const policy = new NgcPolicy({ evictionRate: rate, cadence: 8, blockSize: b, window: 1 });
    const decision = policy.select(observation, NO_RANDOM);
    expect(decision.blocks).toBe(blocks);
    expect(decision.order.length).toBe(keptBlocks);
    expect(decision.keep.length).toBe(keptEntries);
    expect([...decision.order]).toEqual(range(keptBlocks).map((i) => blocks - 1 - i));
    expect([...decision.keep]).toEqual([...expandBlocks(decision.order, b, live)]);
  });

  it('greedy keeps the top blocks in decreasing order; logProb is eq. 2 of that order', () => {
    const means = [0.002, 0.009, 0.001, 0.02, 0.005, 0.0005];
    const observation = blockScoresObservation(means, 4);
    const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 8, blockSize: 4, window: 1 });
    const decision = policy.select(observation, NO_RANDOM); // greedy draws nothing
    expect([...decision.order]).toEqual([3, 1, 4]);
    expect([...decision.keep]).toEqual([...range(4, 4), ...range(4, 12), ...range(4, 16)]);
    expect([...decision.logits]).toEqual([...blockLogits(means, policy.logits)]);
    expect(decision.logProb).toBe(gumbelTopKLogProb(decision.logits, decision.order));
    // Under log-logits at τ = 1, eq. 2 is Π_j m_{σ_j} / (remaining mass).
    const total = means.reduce((a, b) => a + b, 0);
    const expected =
      Math.log(0.02 / total) + Math.log(0.009 / (total - 0.02)) + Math.log(0.005 / (total - 0.029));
    expect(decision.logProb).toBeCloseTo(expected, 5);
    expect(decision.blockSize).toBe(4);
    expect(decision.granularity).toBe('layer');
  });

  it('sample mode is deterministic per seed, varies across seeds, and reports eq. 2', () => {
    const means = [0.003, 0.004, 0.002, 0.0035, 0.003, 0.0025, 0.004, 0.001];
    const observation = blockScoresObservation(means, 2);
    const policy = new NgcPolicy({
      evictionRate: 0.5,
      cadence: 8,
      blockSize: 2,
      window: 1,
      mode: 'sample',
    });
    const a = policy.select(observation, new Rng(3));
    const b = policy.select(observation, new Rng(3));
    expect([...a.order]).toEqual([...b.order]);
    expect([...a.keep]).toEqual([...b.keep]);
    expect(a.logProb).toBe(b.logProb);
    const orders = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const d = policy.select(observation, new Rng(seed));
      orders.add(d.order.join(','));
      expect(d.order.length).toBe(4);
      expect(d.logProb).toBe(gumbelTopKLogProb(d.logits, d.order));
      expect([...d.keep]).toEqual([...expandBlocks(d.order, 2, 16)]);
    }
    expect(orders.size).toBeGreaterThan(10);
  });

  it('produces a decision kv-cache accepts and the type guard recognises', () => {
    const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 8, blockSize: 2, window: 1 });
    const decision: KeepDecision = policy.select(scoredObservation([0.1, 0.2, 0.3]), NO_RANDOM);
    expect(isNgcDecision(decision)).toBe(true);
    expect(isNgcDecision({ granularity: 'layer', keep: Int32Array.of(0) })).toBe(false);
    expect(isNgcDecision({ granularity: 'head', keep: [Int32Array.of(0)] })).toBe(false);
  });

  it('throws E_STATE when the KV heads hold different entries', () => {
    const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 8, blockSize: 2, window: 1 });
    const observation = attentionObservation(
      [
        [0, 1, 2],
        [0, 1, 5],
      ],
      [
        [
          [0.2, 0.3, 0.5],
          [0.2, 0.3, 0.5],
        ],
      ],
    );
    expectLetheError(() => policy.select(observation, NO_RANDOM), 'E_STATE', 'observation');
  });
});
