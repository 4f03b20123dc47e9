import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TriggerContext } from '../../src/policy/eviction-policy';
import { shouldTrigger, type Trigger, validateTrigger } from '../../src/selection/index';

function context(liveCounts: number[], sinceLastRound: number): TriggerContext {
  return { layer: 0, step: 100, liveCounts: Int32Array.from(liveCounts), sinceLastRound };
}

describe('trigger', () => {
  it('fires a cadence exactly when `every` tokens have passed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 200 }),
        (every, since) => {
          expect(shouldTrigger({ every }, context([5], since))).toBe(since >= every);
        },
      ),
    );
  });

  it('fires a live-count trigger when some head exceeds whenLiveExceeds + slack', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 6 }),
        (limit, slack, live) => {
          const fired = shouldTrigger({ whenLiveExceeds: limit, slack }, context(live, 1));
          expect(fired).toBe(live.some((n) => n > limit + slack));
        },
      ),
    );
    expect(shouldTrigger({ whenLiveExceeds: 8 }, context([8, 9], 0))).toBe(true);
    expect(shouldTrigger({ whenLiveExceeds: 8 }, context([8, 8], 0))).toBe(false);
  });

  it('rejects non-integer cadences and capacities with E_ARG', () => {
    for (const every of [1.5, 0, -2, Number.NaN]) {
      expectLetheError(() => validateTrigger({ every }), 'E_ARG', 'trigger.every');
    }
    expectLetheError(
      () => validateTrigger({ whenLiveExceeds: 2.5 }),
      'E_ARG',
      'trigger.whenLiveExceeds',
    );
    expectLetheError(
      () => validateTrigger({ whenLiveExceeds: 4, slack: -1 }),
      'E_ARG',
      'trigger.slack',
    );
    expectLetheError(
      () => validateTrigger({ whenLiveExceeds: 4, slack: 0.5 }),
      'E_ARG',
      'trigger.slack',
    );
    expectLetheError(() => validateTrigger({} as Trigger), 'E_ARG', 'trigger');
  });
});
