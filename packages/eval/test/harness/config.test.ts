import { describe, expect, it } from 'vitest';
import {
  capacityFor,
  cellConfig,
  fullCacheLength,
  parseEvalFlags,
  reproduceCommand,
  type SweepConfig,
  sweepCells,
  validateCellKey,
  validateSweepConfig,
} from '../../src/harness/index';
import { letheError } from '../lethe-error';
import { shellWords } from '../shell-words';

const base = {
  tasks: ['toy'],
  policies: ['full', 'h2o'],
  budgets: [0.5, 0.25],
  seeds: [0],
  examplesPerCell: 4,
};

describe('budget semantics', () => {
  it('gives max(1, ceil(b · L)) entries per KV head, L = prompt + maxNewTokens', () => {
    expect(fullCacheLength(12, 88)).toBe(100);
    expect(capacityFor(0.25, 100)).toBe(25);
    expect(capacityFor(0.3, 10)).toBe(3);
    expect(capacityFor(0.26, 10)).toBe(3);
    expect(capacityFor(0.001, 10)).toBe(1);
    expect(capacityFor(1, 7)).toBe(7);
  });

  it('rejects budgets outside (0, 1] with E_BUDGET naming the field', () => {
    for (const bad of [0, -0.5, 1.0001, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = letheError(() => capacityFor(bad, 10));
      expect([error.code, error.argument]).toEqual(['E_BUDGET', 'budget']);
    }
    for (const [budgets, field] of [
      [[0.5, 0], 'budgets[1]'],
      [[1.5], 'budgets[0]'],
      [[0.25, 0.5, -1], 'budgets[2]'],
      [['0.5'], 'budgets[0]'],
      [[null], 'budgets[0]'],
    ] as const) {
      const error = letheError(() => validateSweepConfig({ ...base, budgets }));
      expect([error.code, error.argument]).toEqual(['E_BUDGET', field]);
    }
  });

  it('allows full only at budget 1', () => {
    const error = letheError(() =>
      validateCellKey({ task: 'toy', policy: 'full', budget: 0.5, seed: 0 }),
    );
    expect([error.code, error.argument]).toEqual(['E_BUDGET', 'budget']);
    expect(validateCellKey({ task: 'toy', policy: 'full', budget: 1, seed: 0 }).budget).toBe(1);
  });
});

describe('validateSweepConfig', () => {
  it('fills defaults and is idempotent', () => {
    const config = validateSweepConfig(base);
    expect(config).toEqual({
      tasks: [{ name: 'toy', options: {} }],
      policies: ['full', 'h2o'],
      budgets: [0.5, 0.25],
      seeds: [0],
      examplesPerCell: 4,
      samplesPerExample: 1,
      passAtK: [],
      sampling: { temperature: 0, topK: 0, topP: 1 },
      batchSize: 16,
      prefillChunk: null,
      checkpoints: {},
    });
    expect(validateSweepConfig(config)).toEqual(config);
    const sampled = validateSweepConfig({ ...base, samplesPerExample: 6 });
    expect(sampled.passAtK).toEqual([1, 2, 4, 6]);
    expect(sampled.sampling.temperature).toBe(1);
  });

  it('rejects malformed configs naming the field', () => {
    const cases: [unknown, string][] = [
      [[], 'config'],
      [{ ...base, extra: 1 }, 'extra'],
      [{ ...base, tasks: [] }, 'tasks'],
      [{ ...base, tasks: undefined }, 'tasks'],
      [{ ...base, tasks: [3] }, 'tasks[0]'],
      [{ ...base, tasks: [{ name: '' }] }, 'tasks[0].name'],
      [{ ...base, tasks: [{ name: 'toy', size: 3 }] }, 'tasks[0].size'],
      [{ ...base, tasks: [{ name: 'toy', options: [] }] }, 'tasks[0].options'],
      [{ ...base, tasks: [{ name: 'toy', options: { n: Number.NaN } }] }, 'tasks[0].options.n'],
      [{ ...base, tasks: ['toy', { name: 'toy' }] }, 'tasks[1].name'],
      [{ ...base, policies: 'h2o' }, 'policies'],
      [{ ...base, policies: ['h2o', 'h2o'] }, 'policies[1]'],
      [{ ...base, policies: ['h2o', 7] }, 'policies[1]'],
      [{ ...base, budgets: [0.5, 0.5] }, 'budgets[1]'],
      [{ ...base, seeds: [-1] }, 'seeds[0]'],
      [{ ...base, seeds: [0, 1.5] }, 'seeds[1]'],
      [{ ...base, examplesPerCell: 0 }, 'examplesPerCell'],
      [{ ...base, examplesPerCell: '4' }, 'examplesPerCell'],
      [{ ...base, samplesPerExample: -2 }, 'samplesPerExample'],
      [{ ...base, samplesPerExample: 2, passAtK: [1, 3] }, 'passAtK[1]'],
      [{ ...base, passAtK: 1 }, 'passAtK'],
      [{ ...base, samplesPerExample: 2, sampling: { temperature: 0 } }, 'sampling.temperature'],
      [{ ...base, sampling: { topP: 2 } }, 'sampling.topP'],
      [{ ...base, sampling: { topK: 1.5 } }, 'sampling.topK'],
      [{ ...base, sampling: { temperature: '1' } }, 'sampling.temperature'],
      [{ ...base, sampling: { beam: 2 } }, 'sampling.beam'],
      [{ ...base, batchSize: 0 }, 'batchSize'],
      [{ ...base, prefillChunk: 0 }, 'prefillChunk'],
      [{ ...base, prefillChunk: 2.5 }, 'prefillChunk'],
      [{ ...base, prefillChunk: '8' }, 'prefillChunk'],
      [{ ...base, checkpoints: 'dir' }, 'checkpoints'],
      [{ ...base, checkpoints: { other: 'dir' } }, 'checkpoints.other'],
      [{ ...base, checkpoints: { toy: '' } }, 'checkpoints.toy'],
    ];
    for (const [json, field] of cases) {
      const error = letheError(() => validateSweepConfig(json));
      expect({ code: error.code, argument: error.argument }).toEqual({
        code: 'E_ARG',
        argument: field,
      });
    }
  });

  it('checks task and policy names against the known ones, listing them', () => {
    const policy = letheError(() =>
      validateSweepConfig({ ...base, policies: ['full', 'h2x'] }, { policies: ['full', 'h2o'] }),
    );
    expect([policy.code, policy.argument]).toEqual(['E_ARG', 'policies[1]']);
    expect(policy.message).toContain('full, h2o');
    const task = letheError(() => validateSweepConfig(base, { tasks: ['countdown', 'lm'] }));
    expect([task.code, task.argument]).toEqual(['E_ARG', 'tasks[0].name']);
    expect(task.message).toContain('countdown, lm');
  });
});

describe('cells and reproduce commands', () => {
  const config: SweepConfig = validateSweepConfig({
    tasks: [{ name: 'toy', options: { label: "it's a b", n: 3 } }, 'lm'],
    policies: ['h2o', 'full'],
    budgets: [0.5, 0.125],
    seeds: [3, 1],
    examplesPerCell: 8,
    samplesPerExample: 4,
    sampling: { temperature: 0.7, topP: 0.95 },
    batchSize: 5,
    prefillChunk: 32,
    checkpoints: { toy: '/runs/my model' },
  });

  it('enumerates cells in a fixed order with full once at budget 1', () => {
    const cells = sweepCells(config);
    expect(cells.slice(0, 3)).toEqual([
      { task: 'toy', policy: 'h2o', budget: 0.5, seed: 3 },
      { task: 'toy', policy: 'h2o', budget: 0.125, seed: 3 },
      { task: 'toy', policy: 'full', budget: 1, seed: 3 },
    ]);
    expect(cells).toHaveLength(2 * 2 * 3);
    expect(cells.at(-1)).toEqual({ task: 'lm', policy: 'full', budget: 1, seed: 1 });
  });

  it('writes a lethe eval command that parses back to exactly the cell', () => {
    for (const key of sweepCells(config)) {
      const command = reproduceCommand(key, config);
      const words = shellWords(command);
      expect(words.slice(0, 4)).toEqual(['lethe', 'eval', '--task', key.task]);
      const parsed = parseEvalFlags(words.slice(2));
      expect(parsed).toEqual(cellConfig(key, config));
      expect(sweepCells(parsed)).toEqual([key]);
    }
    expect(reproduceCommand({ task: 'lm', policy: 'h2o', budget: 0.125, seed: 1 }, config)).toBe(
      'lethe eval --task lm --policy h2o --budget 0.125 --seed 1 --examples 8 --samples 4 ' +
        '--pass-at-k 1,2,4 --temperature 0.7 --top-k 0 --top-p 0.95 --batch-size 5 --prefill-chunk 32',
    );
  });

  it('rejects bad flags naming them', () => {
    const words = shellWords(
      reproduceCommand({ task: 'lm', policy: 'h2o', budget: 0.5, seed: 1 }, config),
    ).slice(2);
    expect(letheError(() => parseEvalFlags([...words, '--nope', '1'])).argument).toBe('--nope');
    expect(letheError(() => parseEvalFlags(words.slice(2))).argument).toBe('--task');
    expect(letheError(() => parseEvalFlags([...words, '--budget', '0.5'])).argument).toBe(
      '--budget',
    );
    expect(letheError(() => parseEvalFlags([...words, '--checkpoint'])).argument).toBe(
      '--checkpoint',
    );
    const budget = words.map((w, i) => (words[i - 1] === '--budget' ? '2' : w));
    const error = letheError(() => parseEvalFlags(budget));
    expect([error.code, error.argument]).toEqual(['E_BUDGET', 'budgets[0]']);
    const seed = words.map((w, i) => (words[i - 1] === '--seed' ? 'one' : w));
    expect(letheError(() => parseEvalFlags(seed)).argument).toBe('--seed');
    expect(
      letheError(() =>
        reproduceCommand({ task: 'nope', policy: 'h2o', budget: 0.5, seed: 1 }, config),
      ).argument,
    ).toBe('key.task');
  });
});
