import { NO_NEEDS } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { StreamingLLMPolicy } from '../src/index';
import { keptOf, NO_RANDOM, observation, range } from './observation';

describe('StreamingLLMPolicy', () => {
  it('keeps the 4 sinks and the most recent tokens', () => {
    const policy = new StreamingLLMPolicy({ budget: { keepCount: 8 } });
    expect(policy.anchors).toEqual({ sinks: 4, window: 0 });
    expect(policy.needs).toEqual(NO_NEEDS);
    const decision = policy.select(observation([range(20)]), NO_RANDOM);
    expect(keptOf(decision)).toEqual([0, 1, 2, 3, 16, 17, 18, 19]);
  });

  it('keeps the sinks by position after earlier rounds, per head', () => {
    const rows = [
      [0, 1, 2, 3, 9, 10, 11, 12, 13],
      [1, 2, 3, 4, 5, 6, 12, 13],
    ];
    const decision = new StreamingLLMPolicy({ budget: { keepCount: 6 } }).select(
      observation(rows),
      NO_RANDOM,
    );
    // Head 0: sinks at positions 0–3, then the two newest. Head 1 lost position 0: sinks 1–3 only.
    expect(keptOf(decision, 0)).toEqual([0, 1, 2, 3, 7, 8]);
    expect(keptOf(decision, 1)).toEqual([0, 1, 2, 5, 6, 7]);
  });

  it('honours custom anchors and a ratio budget', () => {
    const policy = new StreamingLLMPolicy({
      budget: { keepRatio: 0.5 },
      trigger: { every: 8 },
      anchors: { sinks: 1, window: 0 },
    });
    expect(keptOf(policy.select(observation([range(10)]), NO_RANDOM))).toEqual([0, 6, 7, 8, 9]);
  });
});
