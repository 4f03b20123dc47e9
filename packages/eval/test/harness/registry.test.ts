import { type EvictionPolicy, NO_NEEDS } from '@lethe/kv-cache';
import { HEURISTIC_NAMES, SnapKVPolicy, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  amortisationSlack,
  createDefaultRegistry,
  FULL_POLICY,
  type PolicyContext,
  PolicyRegistry,
} from '../../src/harness/index';
import { letheError } from '../lethe-error';
import { tinyModel } from './toy';

let context: PolicyContext;

beforeAll(async () => {
  await initBackend('wasm');
  context = { budget: 0.25, fullLength: 128, task: 'toy', seed: 0, model: tinyModel() };
});

describe('PolicyRegistry', () => {
  it('holds full and every heuristic by default', () => {
    const registry = createDefaultRegistry();
    expect(registry.names()).toEqual([FULL_POLICY, ...HEURISTIC_NAMES]);
    expect(registry.create('full', { capacity: 10 }, context)).toBeUndefined();
    for (const name of HEURISTIC_NAMES) {
      const policy = registry.create(name, { capacity: 32 }, context);
      expect(policy?.name).toBe(name);
    }
  });

  it('builds heuristics with a capacity budget and an amortised capacity trigger', () => {
    const registry = createDefaultRegistry();
    const policy = registry.create('streaming-llm', { capacity: 40 }, context);
    expect(policy).toBeInstanceOf(StreamingLLMPolicy);
    const streaming = policy as StreamingLLMPolicy;
    expect(streaming.budget).toEqual({ capacity: 40 });
    expect(streaming.trigger).toEqual({ whenLiveExceeds: 40, slack: 3 });
    expect(amortisationSlack(40)).toBe(3);
    const snap = registry.create('snapkv', { capacity: 40 }, context) as SnapKVPolicy;
    expect(snap).toBeInstanceOf(SnapKVPolicy);
    expect(snap.windowSize).toBe(10);
    const exact = createDefaultRegistry({ slackFraction: 0 }).create(
      'h2o',
      { capacity: 8 },
      context,
    );
    expect((exact as StreamingLLMPolicy).trigger).toEqual({ whenLiveExceeds: 8, slack: 0 });
  });

  it('rejects an unknown name with E_ARG listing the valid names', () => {
    const registry = createDefaultRegistry();
    const error = letheError(() => registry.create('h2x', { capacity: 8 }, context));
    expect(error.code).toBe('E_ARG');
    expect(error.argument).toBe('policy');
    for (const name of registry.names()) expect(error.message).toContain(name);
  });

  it('is extended by register, per instance', () => {
    const registry = createDefaultRegistry();
    const seen: { capacity: number; fullLength: number }[] = [];
    const keepAll: EvictionPolicy = {
      name: 'never',
      needs: NO_NEEDS,
      anchors: { sinks: 0, window: 0 },
      shouldEvict: () => false,
      select: () => {
        throw new Error('never asked');
      },
    };
    registry.register('never', (budget, ctx) => {
      seen.push({ capacity: budget.capacity, fullLength: ctx.fullLength });
      return keepAll;
    });
    expect(registry.has('never')).toBe(true);
    expect(registry.names().at(-1)).toBe('never');
    expect(registry.create('never', { capacity: 12 }, context)).toBe(keepAll);
    expect(seen).toEqual([{ capacity: 12, fullLength: 128 }]);
    expect(createDefaultRegistry().has('never')).toBe(false);
  });

  it('rejects duplicate and malformed names, and bad capacities', () => {
    const registry = createDefaultRegistry();
    const duplicate = letheError(() => registry.register('h2o', () => undefined));
    expect([duplicate.code, duplicate.argument]).toEqual(['E_ARG', 'name']);
    expect(letheError(() => registry.register('full', () => undefined)).code).toBe('E_ARG');
    expect(letheError(() => registry.register('Bad Name', () => undefined)).argument).toBe('name');
    expect(letheError(() => new PolicyRegistry().register('ok', 3 as never)).argument).toBe(
      'factory',
    );
    const budget = letheError(() => registry.create('h2o', { capacity: 0 }, context));
    expect([budget.code, budget.argument]).toEqual(['E_BUDGET', 'budget.capacity']);
    expect(letheError(() => createDefaultRegistry({ slackFraction: -1 })).argument).toBe(
      'slackFraction',
    );
  });
});
