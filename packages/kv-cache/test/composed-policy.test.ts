import { expectLetheError } from '@lethe/test-utils';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  type ComputePolicy,
  composePolicies,
  composePolicySets,
  type EvictionPolicy,
  type PolicyContext,
  type PolicyProvider,
  PolicyRegistry,
  type ReadSelector,
} from '../src/index';

const context: PolicyContext = {
  model: { layers: 1, kvHeads: 1, queryHeads: 1, headDim: 4, hiddenSize: 4 },
  sequences: 1,
};

/** Policies are only carried by a composition, never run here: plain tagged objects suffice. */
const eviction = (tag: string) => ({ tag }) as unknown as EvictionPolicy;
const compute = (tag: string, refreshEvery?: number) =>
  ({ tag, ...(refreshEvery === undefined ? {} : { refreshEvery }) }) as unknown as ComputePolicy;
const selector = (tag: string) => ({ tag }) as unknown as ReadSelector;

const NO_OPTIONS = v.strictObject({});
const REFRESH_OPTIONS = v.strictObject({ refresh: v.optional(v.boolean(), false) });

/** An eviction provider recording the budgets it was built for. */
const evicting: PolicyProvider<typeof NO_OPTIONS> = {
  name: 'evict',
  summary: 'test eviction',
  options: NO_OPTIONS,
  build: ({ budget }) => ({ eviction: eviction(JSON.stringify(budget)) }),
};
const steering: PolicyProvider<typeof REFRESH_OPTIONS> = {
  name: 'steer',
  summary: 'test compute',
  options: REFRESH_OPTIONS,
  budgetForms: ['compute'],
  build: ({ budget, options }) => ({
    compute: compute(JSON.stringify(budget), options.refresh ? 16 : undefined),
  }),
};
const evictingToo: PolicyProvider<typeof NO_OPTIONS> = { ...evicting, name: 'evict-too' };
const registry = new PolicyRegistry([evicting, steering, evictingToo]);
const targets = { tokenKeep: 0.5, mlpInputKeep: 1, precision: 1 };

describe('composePolicySets', () => {
  it('takes each slot from the part that fills it, the ceiling from the eviction part', () => {
    const a = { eviction: eviction('a'), ceiling: 9 };
    const b = { compute: compute('b') };
    const c = { readSelector: selector('c') };
    expect(composePolicySets([a, b, c])).toEqual({
      eviction: a.eviction,
      ceiling: 9,
      compute: b.compute,
      readSelector: c.readSelector,
    });
    expect(composePolicySets([{}, b])).toEqual({ compute: b.compute });
  });

  it('refuses a slot filled twice, naming the later part and both names', () => {
    const error = expectLetheError(
      () =>
        composePolicySets(
          [{ eviction: eviction('a') }, { eviction: eviction('b') }],
          ['h2o', 'namm'],
        ),
      'E_ARG',
      'sets[1]',
    );
    expect(error.message).toContain('namm and h2o both fill the eviction slot');
  });

  it('refuses a refreshing compute policy beside an eviction policy or a read selector', () => {
    for (const other of [{ eviction: eviction('a') }, { readSelector: selector('q') }]) {
      const error = expectLetheError(
        () => composePolicySets([other, { compute: compute('s', 16) }], ['x', 'sol']),
        'E_ARG',
        'sets[1].compute.refreshEvery',
      );
      expect(error.message).toContain('sol refreshes its KV entries every 16 steps');
    }
    // alone, or without refresh, it composes
    expect(composePolicySets([{ compute: compute('s', 16) }]).compute).toBeDefined();
  });

  it('refuses what is not a list of sets', () => {
    expectLetheError(() => composePolicySets([]), 'E_ARG', 'sets');
    expectLetheError(() => composePolicySets([{}, null as never]), 'E_ARG', 'sets[1]');
  });
});

describe('composePolicies', () => {
  it('builds each part under its own budget and names the composition a+b', async () => {
    const both = composePolicies([
      await registry.prepare('evict'),
      await registry.prepare('steer'),
    ]);
    expect(both.name).toBe('evict+steer');
    const set = both.build([{ capacity: 8 }, { targets }], context);
    expect((set.eviction as unknown as { tag: string }).tag).toBe('{"capacity":8}');
    expect(set.ceiling).toBe(8);
    expect((set.compute as unknown as { tag: string }).tag).toBe(JSON.stringify({ targets }));
  });

  it('one part is that policy', async () => {
    const one = composePolicies([await registry.prepare('evict')]);
    expect(one.name).toBe('evict');
    expect(one.build([{ capacity: 4 }], context)).toEqual({
      eviction: eviction('{"capacity":4}'),
      ceiling: 4,
    });
  });

  it("names the part whose budget is of the wrong form, and a part's refresh", async () => {
    const both = composePolicies([
      await registry.prepare('evict'),
      await registry.prepare('steer', { options: { refresh: true } }),
    ]);
    const error = expectLetheError(
      () => both.build([{ capacity: 8 }, { capacity: 8 }], context),
      'E_BUDGET',
      'budgets[1]',
    );
    expect(error.message).toContain('(steer)');
    expectLetheError(() => both.build([{ capacity: 8 }], context), 'E_ARG', 'budgets');
    expectLetheError(
      () => both.build([{ capacity: 8 }, { targets }], context),
      'E_ARG',
      'sets[1].compute.refreshEvery',
    );
  });

  it('refuses two parts for one slot, repeated parts and an empty list', async () => {
    const evict = await registry.prepare('evict');
    const clash = composePolicies([evict, await registry.prepare('evict-too')]);
    expectLetheError(
      () => clash.build([{ capacity: 8 }, { capacity: 8 }], context),
      'E_ARG',
      'sets[1]',
    );
    expectLetheError(() => composePolicies([evict, evict]), 'E_ARG', 'parts[1]');
    expectLetheError(() => composePolicies([]), 'E_ARG', 'parts');
    expectLetheError(() => composePolicies([{} as never]), 'E_ARG', 'parts[0]');
  });

  it('releases every part', async () => {
    let released = 0;
    const counting = (name: string) => ({
      ...evicting,
      name,
      learned: {
        load: async () => undefined,
        release: () => {
          released += 1;
        },
      },
    });
    const learned = new PolicyRegistry([
      counting('a'),
      { ...counting('b'), budgetForms: ['compute'] },
    ]);
    const directory = (provider: string) => ({
      manifest: { format: 'lethe-policy', version: 1, provider, options: {} },
      files: {
        location: provider,
        readBytes: async () => new Uint8Array(),
        readText: async () => '',
      },
    });
    const both = composePolicies([
      await learned.prepare('a', { directory: directory('a') as never }),
      await learned.prepare('b', { directory: directory('b') as never }),
    ]);
    both.release();
    expect(released).toBe(2);
  });
});
