import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LayerObservation } from '../../src/policy/observation';
import { NO_NEEDS } from '../../src/policy/observation';
import type { RandomSource } from '../../src/policy/random-source';
import {
  AdaKVPolicy,
  anchoredEntryBound,
  type Budget,
  budgetKeepCount,
  ScorerPolicy,
  type ScorerPolicyOptions,
  selectTopBlocks,
  selectTopK,
} from '../../src/selection/index';
import { observationFromRows, padRows, rowArbitrary } from './helpers';

/** A test policy whose scores are given up front. */
class FixedScores extends ScorerPolicy {
  readonly name = 'fixed';
  readonly needs = NO_NEEDS;
  constructor(
    private readonly fixed: Float32Array,
    options: ScorerPolicyOptions,
  ) {
    super(options);
  }
  score(): Float32Array {
    return this.fixed;
  }
}

const noRandom: RandomSource = {
  fillUniform: () => {
    throw new Error('not used');
  },
};

describe('ScorerPolicy', () => {
  it('keeps per head the anchors plus the top of budgetKeepCount entries', () => {
    fc.assert(
      fc.property(
        fc.array(rowArbitrary(16), { minLength: 1, maxLength: 3 }),
        fc.oneof(
          fc.record({ keepRatio: fc.double({ min: 0.01, max: 1, noNaN: true }) }),
          // Anchors of 2 sinks + 1 recent entry, in blocks of ≤ 5: at most 15 entries.
          fc.record({ keepCount: fc.integer({ min: 15, max: 30 }) }),
        ),
        fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        (rows, budget: Budget, blockSize) => {
          const observation = observationFromRows(rows.map((r) => r.positions));
          const scores = padRows(
            rows.map((r) => r.scores),
            observation.maxLive,
          );
          const anchors = { sinks: 2, window: 1 };
          const policy = new FixedScores(scores, {
            budget,
            trigger: { every: 4 },
            anchors,
            blockSize,
          });
          const decision = policy.select(observation, noRandom);
          if (decision.granularity !== 'head') throw new Error('expected head granularity');
          rows.forEach((row, h) => {
            const k = budgetKeepCount(budget, row.scores.length);
            const want =
              blockSize === undefined
                ? selectTopK(row.scores, row.positions, anchors, k)
                : selectTopBlocks(row.scores, row.positions, anchors, k, blockSize, 'mean');
            expect([...decision.keep[h]]).toEqual([...want]);
          });
        },
      ),
    );
  });

  it('shares one keep set at layer granularity', () => {
    const positions = Int32Array.from([0, 1, 2, 3, 4]);
    const observation = observationFromRows([positions, positions]);
    const scores = Float32Array.from([5, 1, 0, 0, 3, 0, 1, 4, 0, 0]);
    const policy = new FixedScores(scores, { budget: { keepCount: 2 }, granularity: 'layer' });
    // Means: [2.5, 1, 2, 0, 1.5] → top 2 = entries 0 and 2.
    expect(policy.select(observation, noRandom)).toEqual({
      granularity: 'layer',
      keep: Int32Array.from([0, 2]),
      scores,
    });
  });

  it('triggers at the keep count by default for a keepCount budget', () => {
    const policy = new FixedScores(new Float32Array(0), { budget: { keepCount: 8 } });
    expect(policy.trigger).toEqual({ whenLiveExceeds: 8 });
    const context = { layer: 0, step: 9, sinceLastRound: 9 };
    expect(policy.shouldEvict({ ...context, liveCounts: Int32Array.from([9]) })).toBe(true);
    expect(policy.shouldEvict({ ...context, liveCounts: Int32Array.from([8]) })).toBe(false);
  });

  it('refuses anchors a keep count cannot hold (E_BUDGET naming anchors)', () => {
    const empty = new Float32Array(0);
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepCount: 4 }, anchors: { sinks: 4, window: 1 } }),
      'E_BUDGET',
      'anchors',
    );
    // In blocks of 2 the window of 1 may straddle two blocks: 2 + 2 · 2 = 6 entries.
    expect(anchoredEntryBound({ sinks: 2, window: 1 }, 2)).toBe(6);
    expectLetheError(
      () =>
        new FixedScores(empty, {
          budget: { keepCount: 5 },
          anchors: { sinks: 2, window: 1 },
          blockSize: 2,
        }),
      'E_BUDGET',
      'anchors',
    );
    expect(
      () => new FixedScores(empty, { budget: { keepCount: 4 }, anchors: { sinks: 3, window: 1 } }),
    ).not.toThrow();
  });

  it('validates its options', () => {
    const empty = new Float32Array(0);
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepRatio: 1.2 }, trigger: { every: 1 } }),
      'E_BUDGET',
    );
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepRatio: 0 }, trigger: { every: 1 } }),
      'E_BUDGET',
    );
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepRatio: 0.5 } }),
      'E_ARG',
      'trigger',
    );
    // A provider's ceiling is not a selection budget: no `capacity` alias for `keepCount`.
    expectLetheError(
      () => new FixedScores(empty, { budget: { capacity: 4 } as unknown as Budget }),
      'E_BUDGET',
      'budget',
    );
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepCount: 4 }, trigger: { every: 2.5 } }),
      'E_ARG',
      'trigger.every',
    );
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepCount: 4 }, blockSize: 0 }),
      'E_ARG',
      'blockSize',
    );
    expectLetheError(
      () => new FixedScores(empty, { budget: { keepCount: 4 }, granularity: 'row' as 'head' }),
      'E_ARG',
      'granularity',
    );
    expectLetheError(
      () =>
        new FixedScores(empty, { budget: { keepCount: 4 }, blockAggregation: 'median' as 'mean' }),
      'E_ARG',
      'blockAggregation',
    );
  });

  it('rejects NaN scores for live entries with E_ARG naming `scores`', () => {
    const observation = observationFromRows([Int32Array.from([0, 1, 2])]);
    const policy = new FixedScores(Float32Array.from([0.2, Number.NaN, 0.1]), {
      budget: { keepCount: 1 },
    });
    expectLetheError(() => policy.select(observation, noRandom), 'E_ARG', 'scores');
  });
});

describe('AdaKVPolicy', () => {
  it('uses the wrapped budget as per-head quota and keeps head decisions', () => {
    const positions = Int32Array.from([0, 1, 2, 3]);
    const observation: LayerObservation = observationFromRows([positions, positions]);
    const scores = Float32Array.from([0.9, 0, 0, 0, 0.5, 0.5, 0.5, 0.4]);
    const inner = new FixedScores(scores, { budget: { keepCount: 2 } });
    const policy = new AdaKVPolicy(inner);
    expect(policy.name).toBe('adakv(fixed)');
    expect(
      policy.shouldEvict({
        layer: 0,
        step: 4,
        sinceLastRound: 4,
        liveCounts: Int32Array.from([3, 3]),
      }),
    ).toBe(true);
    // Quotas 2 + 2; safeguard ceil(0.2·2) = 1 per head (entries 0 and 4); then 0.5, 0.5 of head 1.
    const decision = policy.select(observation, noRandom);
    expect(decision).toEqual({
      granularity: 'head',
      keep: [Int32Array.from([0]), Int32Array.from([0, 1, 2])],
      scores,
    });
  });

  it('rejects layer-granular or block-granular scorers and bad safeguards', () => {
    const empty = new Float32Array(0);
    expectLetheError(
      () =>
        new AdaKVPolicy(new FixedScores(empty, { budget: { keepCount: 2 }, granularity: 'layer' })),
      'E_ARG',
      'scorer',
    );
    expectLetheError(
      () => new AdaKVPolicy(new FixedScores(empty, { budget: { keepCount: 2 }, blockSize: 4 })),
      'E_ARG',
      'scorer',
    );
    expectLetheError(
      () =>
        new AdaKVPolicy(new FixedScores(empty, { budget: { keepCount: 2 } }), { safeguard: -0.1 }),
      'E_ARG',
      'safeguard',
    );
  });
});
