import { expectLetheError, shellWords } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  cellConfig,
  parseEvalFlags,
  policyParts,
  policySpec,
  reproduceCommand,
  sweepCells,
  validateSweepConfig,
} from '../../src/harness/index';

const composed = {
  compose: ['h2o', { name: 'sol-fixed', options: { refresh: false }, budget: 0.5 }],
};

describe('a composed policy in a sweep', () => {
  it('reads { compose } as parts under the label a+b, each with its options and budget', () => {
    const spec = policySpec(composed, 'policies[1]');
    expect(spec).toEqual({
      label: 'h2o+sol-fixed',
      name: 'h2o+sol-fixed',
      options: {},
      dir: null,
      tasks: null,
      compose: [
        { name: 'h2o', options: {}, dir: null, budget: null },
        { name: 'sol-fixed', options: { refresh: false }, dir: null, budget: 0.5 },
      ],
    });
    expect(policyParts(spec)).toBe(spec.compose);
    // a validated spec reads back as itself (results files and cellConfig re-validate)
    expect(policySpec(JSON.parse(JSON.stringify(spec)), 'policies[1]')).toEqual(spec);
    expect(policyParts(policySpec('h2o', 'p'))).toEqual([
      { name: 'h2o', options: {}, dir: null, budget: null },
    ]);
    expect(policySpec({ ...composed, label: 'light' }, 'p').label).toBe('light');
  });

  it('refuses malformed compositions, naming the field', () => {
    const cases: [unknown, string, string?][] = [
      [{ compose: ['h2o'] }, 'p.compose'],
      [{ compose: 'h2o+snapkv' }, 'p.compose'],
      [{ compose: ['h2o', 'h2o'] }, 'p.compose[1]'],
      [{ compose: ['full', 'h2o'] }, 'p.compose[0]'],
      [{ compose: ['h2o', 7] }, 'p.compose[1]'],
      [{ compose: ['h2o', { name: 'sol-fixed', window: 3 }] }, 'p.compose[1].window'],
      [{ compose: ['h2o', { name: 'sol-fixed', budget: 0 }] }, 'p.compose[1].budget', 'E_BUDGET'],
      [{ compose: ['h2o', 'snapkv'], name: 'h2o' }, 'p.name'],
      [{ compose: ['h2o', 'snapkv'], options: { a: 1 } }, 'p.options'],
      [{ compose: ['h2o', 'nope'] }, 'p.compose[1]'],
      [{ compose: ['h2o', 'snapkv'], label: 'a+' }, 'p.label'],
    ];
    for (const [entry, argument, code] of cases) {
      expectLetheError(
        () => policySpec(entry, 'p', ['full', 'h2o', 'snapkv', 'sol-fixed']),
        code ?? 'E_ARG',
        argument,
      );
    }
  });

  it('runs its cells at every budget of the sweep, and reproduces one from the flags', () => {
    const config = validateSweepConfig({
      tasks: ['lm'],
      policies: [
        'full',
        {
          compose: [
            { name: 'namm', dir: 'policies/namm-lm' },
            { name: 'sol-fixed', options: { refresh: false }, budget: 0.5 },
          ],
        },
      ],
      budgets: [0.5, 0.25],
      seeds: [0],
      examplesPerCell: 4,
    });
    expect(sweepCells(config).map((c) => `${c.policy}@${c.budget}`)).toEqual([
      'full@1',
      'namm+sol-fixed@0.5',
      'namm+sol-fixed@0.25',
    ]);
    const key = { task: 'lm', policy: 'namm+sol-fixed', budget: 0.25, seed: 0 };
    const command = reproduceCommand(key, config);
    expect(command).toContain(
      `--policy namm+sol-fixed --policy-options '{"sol-fixed":{"refresh":false}}' --policy-dir '{"namm":"policies/namm-lm"}' --part-budgets '{"sol-fixed":0.5}'`,
    );
    expect(parseEvalFlags(shellWords(command).slice(2))).toEqual(cellConfig(key, config));
  });

  it('refuses composition flags that do not fit the parts', () => {
    const cell = ['--task', 'lm', '--budget', '0.5', '--seed', '0', '--examples', '1'];
    const cases: [string[], string][] = [
      [['--policy', 'h2o+snapkv', '--policy-options', '{"knorm":{}}'], '--policy-options'],
      [['--policy', 'h2o+snapkv', '--policy-dir', 'policies/x'], '--policy-dir'],
      [['--policy', 'h2o', '--part-budgets', '{"h2o":0.5}'], '--part-budgets'],
      [['--policy', 'h2o+snapkv', '--part-budgets', '[0.5]'], '--part-budgets'],
    ];
    for (const [flags, argument] of cases) {
      expectLetheError(() => parseEvalFlags([...cell, ...flags]), 'E_ARG', argument);
    }
    expectLetheError(
      () => parseEvalFlags([...cell, '--policy', 'h2o+snapkv', '--part-budgets', '{"h2o":2}']),
      'E_BUDGET',
      'policies[0].compose[0].budget',
    );
  });
});
