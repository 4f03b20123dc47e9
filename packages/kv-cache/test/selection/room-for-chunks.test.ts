// A round under a keep count leaves room for the tokens that come before the next round
// (`incoming`: a prefill chunk), so a chunked prompt stays under its ceiling.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { roomyKeep } from '../../src/policy/budget-ceiling';
import type { TriggerContext } from '../../src/policy/eviction-policy';
import { NO_NEEDS } from '../../src/policy/observation';
import { ScorerPolicy, shouldTrigger } from '../../src/selection/index';
import { observationFromRows } from './helpers';

class Newest extends ScorerPolicy {
  readonly name = 'newest';
  readonly needs = NO_NEEDS;
  score(observation: { maxLive: number; kvHeads: number; positions: Int32Array }): Float32Array {
    return Float32Array.from(observation.positions);
  }
}

const context = (live: number, incoming?: number): TriggerContext => ({
  layer: 0,
  step: live,
  liveCounts: Int32Array.of(live),
  sinceLastRound: 1,
  ...(incoming === undefined ? {} : { incoming }),
});

describe('room for the next chunk', () => {
  it('roomyKeep: kept − (incoming − 1), never under what must be kept', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 20 }),
        (kept, incoming, least) => {
          const keep = roomyKeep(kept, incoming, least);
          expect(keep).toBe(Math.max(Math.min(kept, least), kept - incoming + 1));
          expect(keep).toBeLessThanOrEqual(kept);
        },
      ),
    );
    expect(roomyKeep(10)).toBe(10);
  });

  it('a live-count trigger fires once the incoming tokens would pass it', () => {
    const trigger = { whenLiveExceeds: 10 };
    expect(shouldTrigger(trigger, context(10))).toBe(false);
    expect(shouldTrigger(trigger, context(10, 2))).toBe(true);
    expect(shouldTrigger(trigger, context(7, 4))).toBe(false);
    expect(shouldTrigger(trigger, context(8, 4))).toBe(true);
    expect(shouldTrigger({ every: 4 }, context(100, 8))).toBe(false);
  });

  it('a round keeps room for the chunk, the anchors still kept', () => {
    const policy = new Newest({
      budget: { keepCount: 10 },
      anchors: { sinks: 2, window: 0 },
    });
    const row = Int32Array.from({ length: 12 }, (_, i) => i);
    const keep = (incoming?: number) => {
      const observation = observationFromRows([row]);
      const decision = policy.select(
        incoming === undefined ? observation : { ...observation, incoming },
        { fillUniform: (out) => out },
      );
      return Array.from((decision.keep as Int32Array[])[0]!);
    };
    expect(keep()).toEqual([0, 1, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(keep(4)).toEqual([0, 1, 7, 8, 9, 10, 11]);
    // never fewer than the anchors and one more
    expect(keep(40)).toEqual([0, 1, 11]);
  });
});
