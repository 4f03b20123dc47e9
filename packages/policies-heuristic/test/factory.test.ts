import { ScorerPolicy } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { createHeuristic, HEURISTIC_NAMES, type HeuristicName, SnapKVPolicy } from '../src/index';

describe('createHeuristic', () => {
  it('builds every listed method under its own name', () => {
    expect(HEURISTIC_NAMES).toEqual([
      'streaming-llm',
      'h2o',
      'snapkv',
      'tova',
      'knorm',
      'keydiff',
      'l2norm',
      'random',
    ]);
    for (const name of HEURISTIC_NAMES) {
      const policy = createHeuristic(name, { budget: { capacity: 32 } });
      expect(policy).toBeInstanceOf(ScorerPolicy);
      expect(policy.name).toBe(name);
    }
  });

  it('passes method options through', () => {
    const policy = createHeuristic('snapkv', {
      budget: { capacity: 32 },
      windowSize: 8,
      kernelSize: 3,
    });
    expect(policy).toBeInstanceOf(SnapKVPolicy);
    expect((policy as SnapKVPolicy).windowSize).toBe(8);
  });

  it('rejects unknown names and options the method does not take', () => {
    expectLetheError(
      () => createHeuristic('lru' as HeuristicName, { budget: { capacity: 8 } }),
      'E_ARG',
      'name',
    );
    expectLetheError(
      () => createHeuristic('knorm', { budget: { capacity: 8 }, windowSize: 4 } as never),
      'E_ARG',
      'options.windowSize',
    );
  });
});
