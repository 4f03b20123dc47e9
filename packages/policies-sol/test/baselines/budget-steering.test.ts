import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTION_PRESETS, type ActionPreset } from '../../src/actions/action-presets';
import { ActionSet } from '../../src/actions/action-set';
import { steerAction, steerLevel } from '../../src/baselines/budget-steering';
import { bracketLevels, LEVEL_TOLERANCE } from '../../src/baselines/level-bracket';
import { SteeredEpisodeBudget } from '../../src/baselines/steered-budget';
import { actionAt, usageLevels } from '../../src/baselines/usage-levels';

/** Strictly ascending levels in (0, 1], 1–6 of them, on a 0.01 grid. */
const levelsArb = fc
  .uniqueArray(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 6 })
  .map((xs) => xs.sort((a, b) => a - b).map((x) => x / 100));

const largestGap = (levels: readonly number[]) =>
  levels.reduce((gap, level, i) => (i === 0 ? gap : Math.max(gap, level - levels[i - 1]!)), 0);

/**
 * Steers one episode of `needs.length` steps whose first `dense` steps are not effective, checking
 * before every step that the target stays attainable when `attainable` is set; returns the
 * realised averages and each step's usage.
 */
function steerEpisode(
  actions: ActionSet,
  targets: readonly [number, number, number],
  needs: readonly number[],
  dense: number,
) {
  const levels = usageLevels(actions);
  const budget = new SteeredEpisodeBudget(needs.length, targets);
  const used = needs.map((need, t) => {
    levels.forEach((axis, a) => {
      const target = targets[a]!;
      if (target < axis[0]! || target > axis[axis.length - 1]!) return;
      // never leaves an attainable target unattainable
      const r = budget.required()[a]!;
      expect(r).toBeGreaterThanOrEqual(axis[0]! - 1e-9);
      expect(r).toBeLessThanOrEqual(axis[axis.length - 1]! + 1e-9);
    });
    const usage = actions.usage(steerAction(actions, budget, need));
    budget.record(usage, t >= dense);
    return usage;
  });
  expect(budget.done).toBe(true);
  return { realised: budget.realised()!, used };
}

const episodeArb = (horizon: fc.Arbitrary<number>) =>
  horizon.chain((T) =>
    fc.record({
      needs: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: T, maxLength: T }),
      dense: fc.integer({ min: 0, max: T - 1 }),
    }),
  );

describe('bracketLevels', () => {
  it('brackets a value by adjacent levels, a mix of which averages to it', () => {
    expect(bracketLevels([0.25, 0.5, 1], 0.75)).toEqual({ lower: 1, upper: 2, weight: 0.5 });
    expect(bracketLevels([0.1, 0.6, 1], 0.6 + LEVEL_TOLERANCE / 2)).toEqual({
      lower: 1,
      upper: 1,
      weight: 0,
    });
    expect(bracketLevels([0.1, 0.6, 1], 0.05)).toEqual({ lower: 0, upper: 0, weight: 0 });
    expect(bracketLevels([0.1, 0.6, 1], 1.5)).toEqual({ lower: 2, upper: 2, weight: 0 });
    fc.assert(
      fc.property(levelsArb, fc.double({ min: 0, max: 1, noNaN: true }), (levels, value) => {
        const { lower, upper, weight } = bracketLevels(levels, value);
        expect(upper - lower).toBeLessThanOrEqual(1);
        expect(weight >= 0 && weight < 1).toBe(true);
        const clamped = Math.min(levels[levels.length - 1]!, Math.max(levels[0]!, value));
        const mix = levels[lower]! + weight * (levels[upper]! - levels[lower]!);
        expect(mix).toBeCloseTo(clamped, 9);
      }),
    );
  });

  it('refuses levels that are not strictly ascending and a non-finite value', () => {
    expectLetheError(() => bracketLevels([], 0.5), 'E_ARG', 'levels');
    expectLetheError(() => bracketLevels([0.6, 0.2], 0.5), 'E_ARG', 'levels');
    expectLetheError(() => bracketLevels([0.2, Number.NaN], 0.5), 'E_ARG', 'levels');
    expectLetheError(() => bracketLevels([0.2, 0.6], Number.NaN), 'E_ARG', 'value');
  });
});

describe('usageLevels and actionAt', () => {
  it('give the levels in budget units and the action of per-axis level indices', () => {
    const actions = new ActionSet(ACTION_PRESETS['2L']);
    expect(usageLevels(actions)).toEqual([
      [0.1, 1],
      [0.6, 1],
      [5 / 16, 1],
    ]);
    for (let a = 0; a < actions.size; a++) {
      const { tokenKeep, mlpInputKeep, activationBits } = actions.action(a);
      const index = (levels: readonly number[], value: number) => levels.indexOf(value);
      const { levels } = actions;
      expect(
        actionAt(actions, [
          index(levels.tokenKeep, tokenKeep),
          index(levels.mlpInputKeep, mlpInputKeep),
          index(levels.activationBits, activationBits),
        ]),
      ).toBe(a);
    }
    expectLetheError(() => actionAt(actions, [0, 2, 0]), 'E_ARG', 'levels[1]');
    expectLetheError(() => usageLevels({} as ActionSet), 'E_ARG', 'actions');
  });
});

describe('SteeredEpisodeBudget', () => {
  it('gives the average the remaining steps must realise, counting only effective steps', () => {
    const budget = new SteeredEpisodeBudget(4, [0.5, 0.8, 0.5]);
    expect(budget.required()).toEqual([0.5, 0.8, 0.5]);
    budget.record([1, 1, 1], false); // not effective: r stays the target
    expect(budget.required()[0]).toBeCloseTo(0.5, 12);
    budget.record([0.1, 1, 1], true);
    // e = 1, R = 2: (0.5·3 − 0.1) / 2 = 0.7
    expect(budget.effectiveCount).toBe(1);
    expect(budget.remaining).toBe(2);
    expect(budget.required()[0]).toBeCloseTo(0.7, 12);
    expect(budget.required()[1]).toBeCloseTo(0.7, 12);
    budget.record([1, 1, 1], true);
    budget.record([1, 1, 1], true);
    expectLetheError(() => budget.required(), 'E_STATE', 'budget');
    expectLetheError(() => new SteeredEpisodeBudget(0, [1, 1, 1]), 'E_ARG', 'horizon');
  });
});

describe('steerLevel (App. C greedy budget steering)', () => {
  it('takes the upper level iff need ≥ 1 − w, then keeps the target attainable', () => {
    const levels = [0.1, 1];
    // r = 0.5: w = 4/9, so the upper level needs u ≥ 5/9
    expect(steerLevel(levels, 0.5, 16, 0.6)).toBe(1);
    expect(steerLevel(levels, 0.5, 16, 0.5)).toBe(0);
    expect(steerLevel(levels, 0.5, 16, 1)).toBe(1);
    expect(steerLevel(levels, 0.5, 16, 0)).toBe(0);
    // two steps left, r = 0.5: the upper level would need 0 from the last step (below 0.1)
    expect(steerLevel(levels, 0.5, 2, 1)).toBe(0);
    // r = 0.95 with two left: the lower level would need 1.8 from the last (above 1)
    expect(steerLevel(levels, 0.95, 2, 0)).toBe(1);
    // the last step follows the need
    expect(steerLevel(levels, 0.5, 1, 1)).toBe(1);
    expect(steerLevel(levels, 0.5, 1, 0)).toBe(0);
    // a level, or outside the range: that level / the nearest extreme, whatever the need
    expect(steerLevel([0.1, 0.6, 1], 0.6, 5, 1)).toBe(1);
    expect(steerLevel(levels, 0.05, 5, 1)).toBe(0);
    expect(steerLevel(levels, 1.2, 5, 0)).toBe(1);
  });

  it('refuses bad arguments with coded errors', () => {
    expectLetheError(() => steerLevel([0.1, 1], 0.5, 0, 0.5), 'E_ARG', 'remaining');
    expectLetheError(() => steerLevel([0.1, 1], 0.5, 2.5, 0.5), 'E_ARG', 'remaining');
    expectLetheError(() => steerLevel([0.1, 1], 0.5, 2, 1.5), 'E_ARG', 'need');
    expectLetheError(() => steerLevel([0.1, 1], 0.5, 2, Number.NaN), 'E_ARG', 'need');
    expectLetheError(() => steerLevel([0.1, 1], Number.NaN, 2, 0.5), 'E_ARG', 'required');
    expectLetheError(() => steerLevel([1, 0.1], 0.5, 2, 0.5), 'E_ARG', 'levels');
  });
});

describe('steerAction', () => {
  it('ends within (largest level gap) / N of an attainable target, never losing attainability', () => {
    fc.assert(
      fc.property(
        levelsArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        episodeArb(fc.integer({ min: 1, max: 24 })),
        (levels, share, { needs, dense }) => {
          const target = levels[0]! + share * (levels[levels.length - 1]! - levels[0]!);
          const actions = new ActionSet({
            tokenKeep: levels,
            mlpInputKeep: [1],
            activationBits: [16],
          });
          const { realised } = steerEpisode(actions, [target, 1, 1], needs, dense);
          const effective = needs.length - dense;
          expect(Math.abs(realised[0] - target)).toBeLessThanOrEqual(
            largestGap(levels) / effective + 1e-9,
          );
          expect(realised[1]).toBe(1);
          expect(realised[2]).toBe(1);
        },
      ),
    );
  });

  it('meets a target that is a level exactly, and takes the nearest extreme for one outside', () => {
    fc.assert(
      fc.property(
        levelsArb,
        fc.nat(),
        episodeArb(fc.integer({ min: 1, max: 24 })),
        (levels, pick, { needs, dense }) => {
          const level = levels[pick % levels.length]!;
          const actions = new ActionSet({
            tokenKeep: levels,
            mlpInputKeep: [0.5, 1],
            activationBits: [4, 8],
          });
          // κ at a level, ρ below its range, η above its range
          const { used } = steerEpisode(actions, [level, 0.2, 0.9], needs, dense);
          for (const usage of used) expect(usage).toEqual([level, 0.5, 0.5]);
        },
      ),
    );
  });

  it('steers every axis of the paper’s action sets at once', () => {
    const presetArb = fc.constantFrom<ActionPreset>('2L', '3L', 'FL', 'FL-336');
    fc.assert(
      fc.property(
        presetArb,
        fc.tuple(...[0, 1, 2].map(() => fc.double({ min: 0, max: 1, noNaN: true }))),
        episodeArb(fc.constantFrom(4, 16, 64)),
        (preset, shares, { needs, dense }) => {
          const actions = new ActionSet(ACTION_PRESETS[preset]);
          const levels = usageLevels(actions);
          const targets = levels.map(
            (axis, a) => axis[0]! + shares[a]! * (axis[axis.length - 1]! - axis[0]!),
          ) as [number, number, number];
          const { realised } = steerEpisode(actions, targets, needs, dense);
          levels.forEach((axis, a) => {
            const bound = largestGap(axis) / (needs.length - dense) + 1e-9;
            expect(Math.abs(realised[a]! - targets[a]!)).toBeLessThanOrEqual(bound);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('spends where the need is high: the upper levels go to the needy steps', () => {
    const actions = new ActionSet(ACTION_PRESETS['2L']);
    const needs = [0, 0, 1, 0, 0, 1, 0, 1];
    const { used } = steerEpisode(actions, [0.1 + 0.9 * (3 / 8), 1, 1], needs, 0);
    expect(used.map((u) => u[0])).toEqual(needs.map((n) => (n === 1 ? 1 : 0.1)));
  });

  it('refuses a foreign budget, a finished episode and a bad need', () => {
    const actions = new ActionSet(ACTION_PRESETS['2L']);
    const budget = new SteeredEpisodeBudget(1, [0.5, 0.5, 0.5]);
    expectLetheError(() => steerAction(actions, budget, 2), 'E_ARG', 'need');
    expectLetheError(
      () => steerAction(actions, {} as SteeredEpisodeBudget, 0.5),
      'E_ARG',
      'budget',
    );
    expectLetheError(() => steerAction({} as ActionSet, budget, 0.5), 'E_ARG', 'actions');
    budget.record([1, 1, 1], true);
    expectLetheError(() => steerAction(actions, budget, 0.5), 'E_STATE', 'budget');
  });
});
