import {
  type AnyPolicyProvider,
  type EvictionPolicy,
  FULL_CACHE,
  fullCacheProvider,
  NO_NEEDS,
  type PolicyContext,
  requireCapacityBudget,
} from '@lethe/kv-cache';
import { type DecoderModel, policyContextOf } from '@lethe/model';
import {
  HEURISTIC_NAMES,
  HEURISTIC_PROVIDERS,
  SnapKVPolicy,
  StreamingLLMPolicy,
} from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDefaultRegistry,
  DEFAULT_PROVIDERS,
  knownPolicies,
  policySpec,
  validateSweepConfig,
} from '../../src/harness/index';
import { tinyModel } from './toy';

let model: DecoderModel;
let context: PolicyContext;

beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel();
  context = policyContextOf(model, 2);
});

afterAll(() => {
  model.dispose();
});

/** A user policy that never evicts. */
const keepAll: EvictionPolicy = {
  name: 'never',
  needs: NO_NEEDS,
  anchors: { sinks: 0, window: 0 },
  shouldEvict: () => false,
  select: () => {
    throw new Error('never asked');
  },
};

function userProvider(name: string, seen: number[] = []): AnyPolicyProvider {
  return {
    name,
    summary: 'keeps everything',
    options: fullCacheProvider.options,
    build: ({ budget }) => {
      seen.push(requireCapacityBudget(budget, name).capacity);
      return { eviction: keepAll };
    },
  };
}

describe('the default registry', () => {
  it('holds full, every heuristic, NGC, NAMM, GSA, SOL and its baselines, in that order', () => {
    const registry = createDefaultRegistry();
    expect(registry.names()).toEqual([
      FULL_CACHE,
      ...HEURISTIC_NAMES,
      'ngc',
      'namm',
      'gsa',
      'sol',
      'sol-fixed',
      'sol-random',
      'sol-random-steered',
      'sol-emc',
      'sol-dac',
    ]);
    expect(HEURISTIC_NAMES).toHaveLength(8);
    expect(registry.list()).toEqual([...DEFAULT_PROVIDERS]);
    expect(DEFAULT_PROVIDERS.slice(1, 9)).toEqual([...HEURISTIC_PROVIDERS]);
  });

  it('prepares the full cache as the empty policy set', async () => {
    const full = await createDefaultRegistry().prepare(FULL_CACHE);
    expect(full.build({ capacity: 10 }, context)).toEqual({});
  });

  it('prepares and builds every heuristic under its own name', async () => {
    const registry = createDefaultRegistry();
    for (const name of HEURISTIC_NAMES) {
      const prepared = await registry.prepare(name);
      expect(prepared.name).toBe(name);
      expect(prepared.model).toBeUndefined();
      const { eviction } = prepared.build({ capacity: 32 }, context);
      expect(eviction?.name).toBe(name);
    }
  });

  it('builds heuristics that keep capacity − 1 per round as soon as the ceiling is reached', async () => {
    const registry = createDefaultRegistry();
    const streaming = (await registry.prepare('streaming-llm')).build({ capacity: 40 }, context)
      .eviction as StreamingLLMPolicy;
    expect(streaming).toBeInstanceOf(StreamingLLMPolicy);
    expect(streaming.budget).toEqual({ capacity: 39 });
    expect(streaming.trigger).toEqual({ whenLiveExceeds: 39, slack: 0 });
    const snap = (await registry.prepare('snapkv')).build({ capacity: 40 }, context)
      .eviction as SnapKVPolicy;
    expect(snap).toBeInstanceOf(SnapKVPolicy);
    expect(snap.windowSize).toBe(9); // ⌊39 / 4⌋
    const wide = (await registry.prepare('snapkv', { options: { windowSize: 6 } })).build(
      { capacity: 40 },
      context,
    ).eviction as SnapKVPolicy;
    expect(wide.windowSize).toBe(6);
  });

  it('builds heuristics for a rate schedule: keep a fraction every n tokens, defaults scaled by n', async () => {
    const registry = createDefaultRegistry();
    const rate = { keepRatio: 0.7, every: 16 };
    for (const name of HEURISTIC_NAMES) {
      const { eviction } = (await registry.prepare(name)).build(rate, context);
      const policy = eviction as StreamingLLMPolicy;
      expect([policy.budget, policy.trigger]).toEqual([{ keepRatio: 0.7 }, { every: 16 }]);
    }
    const streaming = (await registry.prepare('streaming-llm')).build(rate, context)
      .eviction as StreamingLLMPolicy;
    expect(streaming.anchors).toEqual({ sinks: 4, window: 0 });
    const snap = (await registry.prepare('snapkv')).build(rate, context).eviction as SnapKVPolicy;
    expect(snap.windowSize).toBe(4); // ⌊16 / 4⌋
    for (const options of [{ cadence: 8 }, { slackFraction: 0.5 }]) {
      const prepared = await registry.prepare('h2o', { options });
      expectLetheError(
        () => prepared.build(rate, context),
        'E_BUDGET',
        `options.${Object.keys(options)[0]}`,
      );
    }
    const full = await registry.prepare('full');
    expect(full.build(rate, context)).toEqual({});
  });

  it('sets the trigger slack to ceil(slackFraction · capacity)', async () => {
    const registry = createDefaultRegistry();
    const slack = async (name: string, slackFraction: number, capacity: number) => {
      const prepared = await registry.prepare(name, { options: { slackFraction } });
      expect(prepared.options.slackFraction).toBe(slackFraction);
      const { eviction } = prepared.build({ capacity }, context);
      return (eviction as StreamingLLMPolicy).trigger;
    };
    expect(await slack('streaming-llm', 0.0625, 40)).toEqual({ whenLiveExceeds: 39, slack: 3 });
    expect(await slack('h2o', 0.1, 8)).toEqual({ whenLiveExceeds: 7, slack: 1 });
    expect(await slack('h2o', 0, 8)).toEqual({ whenLiveExceeds: 7, slack: 0 });
    await expectLetheRejection(
      registry.prepare('h2o', { options: { slackFraction: -1 } }),
      'E_ARG',
      'options.slackFraction',
    );
  });

  it('refuses bad options naming them', async () => {
    const registry = createDefaultRegistry();
    await expectLetheRejection(
      registry.prepare('snapkv', { options: { windowSize: 0 } }),
      'E_ARG',
      'options.windowSize',
    );
    await expectLetheRejection(
      registry.prepare('knorm', { options: { windowsize: 4 } }),
      'E_ARG',
      'options.windowsize',
    );
    await expectLetheRejection(registry.prepare('h2o', { options: [1] }), 'E_ARG', 'options');
  });

  it('refuses NGC without a policy directory', async () => {
    await expectLetheRejection(createDefaultRegistry().prepare('ngc'), 'E_ARG', 'policyDir');
  });

  it('rejects an unknown name with E_ARG listing the valid names', async () => {
    const registry = createDefaultRegistry();
    const error = await expectLetheRejection(registry.prepare('h2x'), 'E_ARG', 'policy');
    for (const name of registry.names()) expect(error.message).toContain(name);
  });

  it('rejects bad capacities', async () => {
    const h2o = await createDefaultRegistry().prepare('h2o');
    expectLetheError(() => h2o.build({ capacity: 0 }, context), 'E_BUDGET', 'budget.capacity');
    expectLetheError(() => h2o.build({ capacity: 2.5 }, context), 'E_BUDGET', 'budget.capacity');
  });

  it('builds only the budget forms a provider declares', async () => {
    const targets = { tokenKeep: 0.5, mlpInputKeep: 1, precision: 1 };
    const h2o = await createDefaultRegistry().prepare('h2o');
    expect(h2o.budgetForms).toEqual(['capacity', 'rate']);
    expectLetheError(() => h2o.build({ targets }, context), 'E_BUDGET', 'budget');
    const computeOnly: AnyPolicyProvider = {
      ...userProvider('compute-only'),
      budgetForms: ['compute'],
      build: () => ({}),
    };
    // A sweep's "*" expands to the memory heuristics: compute policies are listed by name.
    const known = knownPolicies(createDefaultRegistry([computeOnly]));
    expect(known.policies).toContain('compute-only');
    expect(known.untrained).not.toContain('compute-only');
    expect(known.untrained).toEqual([FULL_CACHE, ...HEURISTIC_NAMES]);
    const prepared = await createDefaultRegistry([computeOnly]).prepare('compute-only');
    expect(prepared.build({ targets }, context)).toEqual({});
    expectLetheError(() => prepared.build({ capacity: 8 }, context), 'E_BUDGET', 'budget');
    for (const budgetForms of [[], ['memory'], 'compute']) {
      expectLetheError(
        () => createDefaultRegistry([{ ...computeOnly, budgetForms } as AnyPolicyProvider]),
        'E_ARG',
        `providers[${DEFAULT_PROVIDERS.length}].budgetForms`,
      );
    }
  });

  it('reaches a user provider given after the defaults, per registry', async () => {
    const seen: number[] = [];
    const registry = createDefaultRegistry([userProvider('never', seen)]);
    expect(registry.has('never')).toBe(true);
    expect(registry.names().at(-1)).toBe('never');
    const prepared = await registry.prepare('never');
    // a capacity budget's set carries its ceiling (what runtimes bound prefill chunks by)
    expect(prepared.build({ capacity: 12 }, context)).toEqual({ eviction: keepAll, ceiling: 12 });
    expect(seen).toEqual([12]);
    // a rate schedule bounds nothing; the full cache evicts nothing
    const h2o = await registry.prepare('h2o');
    expect(h2o.build({ keepRatio: 0.5, every: 4 }, context).ceiling).toBeUndefined();
    expect(h2o.build({ capacity: 9 }, context).ceiling).toBe(9);
    const full = await registry.prepare(FULL_CACHE);
    expect(full.build({ capacity: 12 }, context).ceiling).toBeUndefined();
    expect(createDefaultRegistry().has('never')).toBe(false);
  });

  it('releases a learned provider’s parameters once, through PreparedPolicy.release', async () => {
    const released: string[] = [];
    const learned: AnyPolicyProvider = {
      ...userProvider('learned-keep-all'),
      learned: {
        load: async (directory) => `weights of ${directory.files.location}`,
        release: (parameters: string) => released.push(parameters),
      },
    };
    const registry = createDefaultRegistry([learned]);
    const directory = {
      files: {
        location: 'memory:x',
        readText: async () => '',
        readBytes: async () => new Uint8Array(),
      },
      manifest: { format: 'lethe-policy', version: 1, provider: 'learned-keep-all', options: {} },
    } as const;
    const prepared = await registry.prepare('learned-keep-all', { directory });
    prepared.release();
    prepared.release();
    expect(released).toEqual(['weights of memory:x']);
    // A heuristic has nothing to release; its release is a no-op.
    const h2o = await createDefaultRegistry().prepare('h2o');
    expect(h2o.release()).toBeUndefined();
  });

  it('rejects name clashes and malformed providers', () => {
    const n = DEFAULT_PROVIDERS.length;
    expectLetheError(
      () => createDefaultRegistry([userProvider('h2o')]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider(FULL_CACHE)]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider('ok'), userProvider('ok')]),
      'E_ARG',
      `providers[${n + 1}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([userProvider('Bad Name')]),
      'E_ARG',
      `providers[${n}].name`,
    );
    expectLetheError(
      () => createDefaultRegistry([3 as unknown as AnyPolicyProvider]),
      'E_ARG',
      `providers[${n}]`,
    );
  });
});

describe('policySpec', () => {
  it('reads a name as the spec with default label, no options and no directory', () => {
    expect(policySpec('h2o', 'policies[0]')).toEqual({
      label: 'h2o',
      name: 'h2o',
      options: {},
      dir: null,
      tasks: null,
    });
  });

  it('reads the object form', () => {
    expect(
      policySpec({ name: 'snapkv', label: 'snapkv-w8', options: { windowSize: 8 } }, 'policies[1]'),
    ).toEqual({
      label: 'snapkv-w8',
      name: 'snapkv',
      options: { windowSize: 8 },
      dir: null,
      tasks: null,
    });
    expect(policySpec({ name: 'ngc', dir: 'runs/ngc' }, 'p')).toEqual({
      label: 'ngc',
      name: 'ngc',
      options: {},
      dir: 'runs/ngc',
      tasks: null,
    });
  });

  it('refuses unknown fields, unknown names, bad labels, options and directories', () => {
    expectLetheError(() => policySpec({ name: 'h2o', opts: {} }, 'p'), 'E_ARG', 'p.opts');
    expectLetheError(() => policySpec(3, 'p'), 'E_ARG', 'p');
    expectLetheError(() => policySpec({ label: 'x' }, 'p'), 'E_ARG', 'p.name');
    const unknown = expectLetheError(() => policySpec('h2x', 'p', ['full', 'h2o']), 'E_ARG', 'p');
    expect(unknown.message).toContain('full, h2o');
    expectLetheError(() => policySpec({ name: 'h2x' }, 'p', ['full', 'h2o']), 'E_ARG', 'p.name');
    expectLetheError(() => policySpec({ name: 'h2o', label: 'H2O fast' }, 'p'), 'E_ARG', 'p.label');
    expectLetheError(() => policySpec({ name: 'h2o', label: '' }, 'p'), 'E_ARG', 'p.label');
    expectLetheError(() => policySpec({ name: 'h2o', options: [1] }, 'p'), 'E_ARG', 'p.options');
    expectLetheError(() => policySpec({ name: 'ngc', dir: '' }, 'p'), 'E_ARG', 'p.dir');
  });

  it('keeps the label full for the full cache alone', () => {
    expectLetheError(
      () => policySpec({ name: 'full', label: 'baseline' }, 'p'),
      'E_ARG',
      'p.label',
    );
    expectLetheError(() => policySpec({ name: 'h2o', label: 'full' }, 'p'), 'E_ARG', 'p.label');
  });

  it('makes validateSweepConfig refuse duplicate labels', () => {
    const sweep = (policies: unknown[]) => ({
      tasks: ['toy'],
      policies,
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 2,
    });
    const config = validateSweepConfig(
      sweep(['h2o', { name: 'h2o', label: 'h2o-slack', options: { slackFraction: 0.1 } }]),
    );
    expect(config.policies.map((p) => p.label)).toEqual(['h2o', 'h2o-slack']);
    expectLetheError(
      () => validateSweepConfig(sweep(['h2o', { name: 'h2o', options: { slackFraction: 0.1 } }])),
      'E_ARG',
      'policies[1].label',
    );
    expectLetheError(
      () => validateSweepConfig(sweep(['snapkv', { name: 'h2o', label: 'snapkv' }])),
      'E_ARG',
      'policies[1].label',
    );
  });

  it('lets a label repeat only for policies on disjoint tasks', () => {
    const sweep = (policies: unknown[]) => ({
      tasks: ['toy', 'toy-lm'],
      policies,
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 2,
    });
    const onToy = { name: 'h2o', label: 'h', tasks: ['toy'] };
    const onLm = { name: 'h2o', label: 'h', options: { slackFraction: 0.1 }, tasks: ['toy-lm'] };
    const config = validateSweepConfig(sweep([onToy, onLm]));
    expect(config.policies.map((p) => [p.label, p.tasks])).toEqual([
      ['h', ['toy']],
      ['h', ['toy-lm']],
    ]);
    for (const second of [
      { ...onLm, tasks: ['toy-lm', 'toy'] },
      { ...onLm, tasks: undefined },
    ]) {
      expectLetheError(
        () => validateSweepConfig(sweep([onToy, second])),
        'E_ARG',
        'policies[1].label',
      );
    }
  });
});
