import { type AnyPolicyProvider, FULL_CACHE, fullCacheProvider } from '@lethe/kv-cache';
import { createDefaultRegistry } from '@lethe/policies';
import { HEURISTIC_NAMES } from '@lethe/policies-heuristic';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  knownPolicies,
  leaderboardRoles,
  policySpec,
  validateSweepConfig,
} from '../../src/harness/index';

describe('knownPolicies', () => {
  it('expands "*" to the memory heuristics: compute policies and read selectors are listed by name', () => {
    const computeOnly: AnyPolicyProvider = {
      name: 'compute-only',
      summary: 'changes no knob',
      options: fullCacheProvider.options,
      budgetForms: ['compute'],
      build: () => ({}),
    };
    const known = knownPolicies(createDefaultRegistry([computeOnly]));
    expect(known.policies).toContain('compute-only');
    expect(known.untrained).not.toContain('compute-only');
    expect(known.untrained).toEqual([FULL_CACHE, ...HEURISTIC_NAMES.filter((n) => n !== 'quest')]);
    expect(known.policies).toContain('quest');
  });
});

describe('leaderboardRoles', () => {
  it('compares the memory policies with the heuristics among them; compute and read budgets stay out, plotted by net keep-rate', () => {
    const config = validateSweepConfig({
      tasks: ['retrieval'],
      policies: [
        'full',
        'h2o',
        { label: 'snap8', name: 'snapkv', options: { windowSize: 8 } },
        { name: 'namm', dir: 'models/namm' },
        'quest',
        'sol-fixed',
        'h2o+quest',
      ],
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 1,
    });
    expect(leaderboardRoles(config, createDefaultRegistry())).toEqual({
      heuristics: ['h2o', 'snap8'],
      compared: ['h2o', 'snap8', 'namm'],
      compute: ['quest', 'sol-fixed', 'h2o+quest'],
    });
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

  it('reads transfer: true for a learned policy, leaves it out when false, refuses it otherwise', () => {
    expect(policySpec({ name: 'namm', dir: 'runs/namm', transfer: true }, 'p')).toEqual({
      label: 'namm',
      name: 'namm',
      options: {},
      dir: 'runs/namm',
      tasks: null,
      transfer: true,
    });
    expect(policySpec({ name: 'namm', dir: 'runs/namm', transfer: false }, 'p')).not.toHaveProperty(
      'transfer',
    );
    expectLetheError(
      () => policySpec({ name: 'namm', dir: 'd', transfer: 1 }, 'p'),
      'E_ARG',
      'p.transfer',
    );
    expectLetheError(() => policySpec({ name: 'h2o', transfer: true }, 'p'), 'E_ARG', 'p.transfer');
    expectLetheError(
      () => policySpec({ compose: ['h2o', 'sol-fixed'], transfer: true }, 'p'),
      'E_ARG',
      'p.transfer',
    );
    expect(
      policySpec({ compose: [{ name: 'namm', dir: 'd' }, 'sol-fixed'], transfer: true }, 'p')
        .transfer,
    ).toBe(true);
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
