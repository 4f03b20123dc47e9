import { expectLetheError, shellWords } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  budgetsOf,
  capacityFor,
  cellConfig,
  cellSettings,
  checkpointOf,
  fullCacheLength,
  fullPeakPerHead,
  parseEvalFlags,
  prefillChunkOf,
  rateEveryOf,
  reproduceCommand,
  type SweepConfig,
  seedsOf,
  sequenceBudget,
  sweepCells,
  validateCellKey,
  validateSweepConfig,
} from '../../src/harness/index';

const base = {
  tasks: ['toy'],
  policies: ['full', 'h2o'],
  budgets: [0.5, 0.25],
  seeds: [0],
  examplesPerCell: 4,
};

describe('budget semantics', () => {
  it('reads a full-cache peak per KV head, refusing a sum that is not one', () => {
    expect(fullPeakPerHead(312, 4)).toBe(78);
    expectLetheError(() => fullPeakPerHead(313, 4), 'E_ARG', 'peakTotal');
    expectLetheError(() => fullPeakPerHead(0, 4), 'E_ARG', 'peakTotal');
  });

  it('gives max(2, ceil(b · P)) entries per KV head of a full-cache peak P', () => {
    expect(fullCacheLength(12, 88)).toBe(100);
    expect(capacityFor(0.25, 100)).toBe(25);
    expect(capacityFor(0.3, 10)).toBe(3);
    expect(capacityFor(0.26, 10)).toBe(3);
    expect(capacityFor(0.001, 10)).toBe(2); // one kept entry plus the newest token
    expect(capacityFor(1, 7)).toBe(7);
  });

  it('gives a ceiling, a rate schedule, for a compute policy every axis the fraction as its target, for a read selector the capacity’s count as its reads', () => {
    expect(sequenceBudget(0.25, 100, null)).toEqual({ capacity: 25 });
    expect(sequenceBudget(0.25, 100, 8)).toEqual({ keepRatio: 0.25, every: 8 });
    expect(sequenceBudget(0.3, 100, null, ['compute'])).toEqual({
      targets: { tokenKeep: 0.3, mlpInputKeep: 0.3, precision: 0.3 },
    });
    expect(sequenceBudget(0.3, 100, 8, ['capacity', 'rate'])).toEqual({ keepRatio: 0.3, every: 8 });
    expectLetheError(() => sequenceBudget(0, 100, null, ['compute']), 'E_BUDGET', 'budget');
    // a read selector: ⌈b · P⌉ entries per KV head and step, by the capacity's rule, rate or not
    expect(sequenceBudget(0.25, 100, null, ['read'])).toEqual({ readTokens: 25 });
    expect(sequenceBudget(0.26, 10, 8, ['read'])).toEqual({ readTokens: 3 });
    expect(sequenceBudget(0.001, 10, null, ['read'])).toEqual({ readTokens: 2 });
    expectLetheError(() => sequenceBudget(1.5, 100, null, ['read']), 'E_BUDGET', 'budget');
    expectLetheError(() => sequenceBudget(0.5, 0, null, ['read']), 'E_ARG', 'fullPeak');
  });

  it('rejects budgets outside (0, 1] with E_BUDGET naming the field', () => {
    for (const bad of [0, -0.5, 1.0001, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = expectLetheError(() => capacityFor(bad, 10));
      expect([error.code, error.argument]).toEqual(['E_BUDGET', 'budget']);
    }
    for (const [budgets, field] of [
      [[0.5, 0], 'budgets[1]'],
      [[1.5], 'budgets[0]'],
      [[0.25, 0.5, -1], 'budgets[2]'],
      [['0.5'], 'budgets[0]'],
      [[null], 'budgets[0]'],
    ] as const) {
      const error = expectLetheError(() => validateSweepConfig({ ...base, budgets }));
      expect([error.code, error.argument]).toEqual(['E_BUDGET', field]);
    }
  });

  it('allows full only at budget 1', () => {
    const error = expectLetheError(() =>
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
      policies: [
        { label: 'full', name: 'full', options: {}, dir: null, tasks: null },
        { label: 'h2o', name: 'h2o', options: {}, dir: null, tasks: null },
      ],
      budgets: [0.5, 0.25],
      rateEvery: null,
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
      [{ ...base, policies: ['h2o', 'h2o'] }, 'policies[1].label'],
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
      [{ ...base, rateEvery: 0 }, 'rateEvery'],
      [{ ...base, rateEvery: 1.5 }, 'rateEvery'],
      [{ ...base, rateEvery: '16' }, 'rateEvery'],
      [{ ...base, prefillChunk: 2.5 }, 'prefillChunk'],
      [{ ...base, prefillChunk: '8' }, 'prefillChunk'],
      [{ ...base, checkpoints: 'dir' }, 'checkpoints'],
      [{ ...base, checkpoints: { other: 'dir' } }, 'checkpoints.other'],
      [{ ...base, checkpoints: { toy: '' } }, 'checkpoints.toy'],
    ];
    for (const [json, field] of cases) {
      const error = expectLetheError(() => validateSweepConfig(json));
      expect({ code: error.code, argument: error.argument }).toEqual({
        code: 'E_ARG',
        argument: field,
      });
    }
  });

  it('checks task and policy names against the known ones, listing them', () => {
    const policy = expectLetheError(() =>
      validateSweepConfig({ ...base, policies: ['full', 'h2x'] }, { policies: ['full', 'h2o'] }),
    );
    expect([policy.code, policy.argument]).toEqual(['E_ARG', 'policies[1]']);
    expect(policy.message).toContain('full, h2o');
    const task = expectLetheError(() => validateSweepConfig(base, { tasks: ['countdown', 'lm'] }));
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

  it('expands "*" to every provider needing no directory that is not listed by name', () => {
    const known = {
      policies: ['full', 'h2o', 'snapkv', 'ngc'],
      untrained: ['full', 'h2o', 'snapkv'],
    };
    const expanded = validateSweepConfig(
      {
        ...base,
        policies: ['*', { name: 'snapkv', options: { windowSize: 4 } }, { name: 'ngc', dir: 'd' }],
      },
      known,
    );
    expect(expanded.policies.map((p) => p.label)).toEqual(['full', 'h2o', 'snapkv', 'ngc']);
    expect(expanded.policies[2]!.options).toEqual({ windowSize: 4 });
    expect(validateSweepConfig(expanded, known)).toEqual(expanded);
    expectLetheError(
      () => validateSweepConfig({ ...base, policies: ['*'] }),
      'E_ARG',
      'policies[0]',
    );
  });

  it('expands { name: "*", tasks } to those providers on those tasks only', () => {
    const known = { policies: ['full', 'h2o', 'snapkv'], untrained: ['full', 'h2o', 'snapkv'] };
    const config = {
      ...base,
      tasks: ['toy', 'lm'],
      policies: ['full', { name: '*', tasks: ['lm'] }],
    };
    const expanded = validateSweepConfig(config, known);
    expect(expanded.policies.map((p) => [p.label, p.tasks])).toEqual([
      ['full', null],
      ['h2o', ['lm']],
      ['snapkv', ['lm']],
    ]);
    expect(
      sweepCells(expanded)
        .filter((c) => c.task === 'toy')
        .map((c) => c.policy),
    ).toEqual(['full']);
    expectLetheError(
      () =>
        validateSweepConfig(
          { ...config, policies: [{ name: '*', tasks: ['lm'], options: { windowSize: 4 } }] },
          known,
        ),
      'E_ARG',
      'policies[0]',
    );
    // A provider listed for some tasks stays in "*", under its own label there.
    const alongside = validateSweepConfig(
      {
        ...config,
        policies: [
          '*',
          { name: 'snapkv', label: 'snapkv-w4', options: { windowSize: 4 }, tasks: ['lm'] },
        ],
      },
      known,
    );
    expect(alongside.policies.map((p) => p.label)).toEqual(['full', 'h2o', 'snapkv', 'snapkv-w4']);
    // The tasks are checked as any policy's.
    expectLetheError(
      () => validateSweepConfig({ ...config, policies: [{ name: '*', tasks: ['nope'] }] }, known),
      'E_ARG',
    );
  });

  it('runs a policy restricted to some tasks only there, and refuses a task not in the sweep', () => {
    const restricted = validateSweepConfig({
      ...base,
      tasks: ['toy', 'lm'],
      policies: ['full', { name: 'h2o', tasks: ['lm'] }],
    });
    expect(
      sweepCells(restricted)
        .filter((k) => k.policy === 'h2o')
        .map((k) => k.task),
    ).toEqual(['lm', 'lm']);
    expectLetheError(
      () => validateSweepConfig({ ...base, policies: [{ name: 'h2o', tasks: ['lm'] }] }),
      'E_ARG',
      'policies[0].tasks[0]',
    );
    expectLetheError(
      () => validateSweepConfig({ ...base, policies: [{ name: 'h2o', tasks: [] }] }),
      'E_ARG',
      'policies[0].tasks',
    );
  });

  it('runs a policy with its own budgets only at those, and refuses one no task of it offers', () => {
    const config = {
      ...base,
      tasks: ['toy', { name: 'lm', budgets: [0.5, 0.125] }],
      policies: ['full', 'h2o', { name: 'snapkv', budgets: [0.125, 0.5] }],
    };
    const held = validateSweepConfig(config);
    const snap = held.policies.find((p) => p.name === 'snapkv')!;
    expect(snap.budgets).toEqual([0.125, 0.5]);
    expect(held.policies.find((p) => p.name === 'h2o')!).not.toHaveProperty('budgets');
    const at = (policy: string) =>
      sweepCells(held)
        .filter((k) => k.policy === policy)
        .map((k) => `${k.task}@${k.budget}`);
    expect(at('h2o')).toEqual(['toy@0.5', 'toy@0.25', 'lm@0.5', 'lm@0.125']);
    expect(at('snapkv')).toEqual(['toy@0.5', 'lm@0.5', 'lm@0.125']);
    // A cell's settings leave the list out: narrowing it keeps the cells it still holds.
    const narrowed = validateSweepConfig({
      ...config,
      policies: ['full', 'h2o', { name: 'snapkv', budgets: [0.5] }],
    });
    const key = { task: 'lm', policy: 'snapkv', budget: 0.5, seed: 0 };
    expect(cellSettings(narrowed, key)).toEqual(cellSettings(held, key));

    const refused = (budgets: unknown, tasks?: string[]) => () =>
      validateSweepConfig({
        ...config,
        policies: ['full', { name: 'snapkv', budgets, ...(tasks ? { tasks } : {}) }],
      });
    expectLetheError(refused([0.125], ['toy']), 'E_ARG', 'policies[1].budgets[0]');
    expectLetheError(refused([0.3]), 'E_ARG', 'policies[1].budgets[0]');
    expectLetheError(refused([0.5, 0.5]), 'E_ARG', 'policies[1].budgets[1]');
    expectLetheError(refused([]), 'E_ARG', 'policies[1].budgets');
    expectLetheError(refused([1.5]), 'E_BUDGET', 'policies[1].budgets[0]');
    expectLetheError(
      () => validateSweepConfig({ ...base, policies: [{ name: 'full', budgets: [0.5] }] }),
      'E_ARG',
      'policies[0].budgets',
    );
  });

  it('holds one registry task several times under labels, each with its own cells and command', () => {
    const labelled = validateSweepConfig({
      ...base,
      tasks: [
        { name: 'toy', label: 'short', options: { maxNewTokens: 4 } },
        { name: 'toy', label: 'toy', options: { maxNewTokens: 12 } },
        { name: 'lm', label: 'story' },
      ],
      policies: ['full', { name: 'h2o', tasks: ['short', 'story'] }],
      checkpoints: { toy: '/m/toy', story: '/m/story' },
    });
    expect(labelled.tasks.map((t) => t.label)).toEqual(['short', undefined, 'story']);
    expect(sweepCells(labelled).map((k) => `${k.task}/${k.policy}`)).toEqual([
      'short/full',
      'short/h2o',
      'short/h2o',
      'toy/full',
      'story/full',
      'story/h2o',
      'story/h2o',
    ]);
    expect(['short', 'toy', 'story', 'lm'].map((t) => checkpointOf(labelled, t))).toEqual([
      '/m/toy',
      '/m/toy',
      '/m/story',
      undefined,
    ]);
    const key = { task: 'short', policy: 'h2o', budget: 0.25, seed: 0 };
    const command = reproduceCommand(key, labelled);
    expect(command).toContain(`--task toy --task-options '{"maxNewTokens":4}' --task-label short`);
    expect(command).toContain('--checkpoint /m/toy');
    const parsed = parseEvalFlags(shellWords(command).slice(2));
    expect(parsed).toEqual({ ...cellConfig(key, labelled), checkpoints: { short: '/m/toy' } });
    expect(sweepCells(parsed)).toEqual([key]);
    expect(checkpointOf(parsed, 'short')).toBe('/m/toy');
  });

  it('gives a task its own budgets, kept only where they differ, each cell carried by its command', () => {
    const own = validateSweepConfig({
      ...base,
      tasks: [
        { name: 'toy', label: 'toy@rate', rateEvery: 8, budgets: [0.7, 0.6] },
        { name: 'lm', budgets: [0.5, 0.25] },
      ],
      policies: ['full', 'h2o'],
      budgets: [0.5, 0.25],
    });
    expect(own.tasks.map((t) => t.budgets)).toEqual([[0.7, 0.6], undefined]);
    expect(['toy@rate', 'lm'].map((t) => budgetsOf(own, t))).toEqual([
      [0.7, 0.6],
      [0.5, 0.25],
    ]);
    const cells = sweepCells(own).filter((c) => c.policy === 'h2o');
    expect(cells.map((c) => `${c.task}@${c.budget}`)).toEqual([
      'toy@rate@0.7',
      'toy@rate@0.6',
      'lm@0.5',
      'lm@0.25',
    ]);
    const key = cells[1]!;
    const parsed = parseEvalFlags(shellWords(reproduceCommand(key, own)).slice(2));
    expect(parsed).toEqual(cellConfig(key, own));
    expect(sweepCells(parsed)).toEqual([key]);
    // A task's prefill chunk null takes each prompt whole, whatever the sweep's.
    const whole = validateSweepConfig({
      ...base,
      tasks: [{ name: 'toy', prefillChunk: null }, 'lm'],
      prefillChunk: 4,
    });
    expect(['toy', 'lm'].map((t) => prefillChunkOf(whole, t))).toEqual([null, 4]);
    const wholeKey = { task: 'toy', policy: 'h2o', budget: 0.5, seed: 0 };
    const wholeCommand = reproduceCommand(wholeKey, whole);
    expect(wholeCommand).not.toContain('--prefill-chunk');
    expect(parseEvalFlags(shellWords(wholeCommand).slice(2))).toEqual(cellConfig(wholeKey, whole));
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', budgets: [0.5, 1.5] }] }),
      'E_BUDGET',
      'tasks[0].budgets[1]',
    );
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', budgets: [0.5, 0.5] }] }),
      'E_ARG',
      'tasks[0].budgets[1]',
    );
  });

  it('gives a task its own budget rule, kept only where it differs, carried by its command', () => {
    const ruled = validateSweepConfig({
      ...base,
      tasks: [
        { name: 'toy', label: 'toy@ceiling', rateEvery: null },
        { name: 'toy', label: 'toy@rate', rateEvery: 8 },
        { name: 'lm', rateEvery: 16 },
      ],
      rateEvery: 16,
    });
    expect(ruled.tasks).toEqual([
      { name: 'toy', label: 'toy@ceiling', options: {}, rateEvery: null },
      { name: 'toy', label: 'toy@rate', options: {}, rateEvery: 8 },
      { name: 'lm', options: {} },
    ]);
    expect(['toy@ceiling', 'toy@rate', 'lm'].map((t) => rateEveryOf(ruled, t))).toEqual([
      null,
      8,
      16,
    ]);
    for (const [task, flag] of [
      ['toy@ceiling', undefined],
      ['toy@rate', '--rate-every 8'],
      ['lm', '--rate-every 16'],
    ] as const) {
      const key = { task, policy: 'h2o', budget: 0.5, seed: 0 };
      const command = reproduceCommand(key, ruled);
      if (flag === undefined) expect(command).not.toContain('--rate-every');
      else expect(command).toContain(flag);
      const parsed = parseEvalFlags(shellWords(command).slice(2));
      expect(parsed).toEqual(cellConfig(key, ruled));
      expect(rateEveryOf(parsed, task)).toBe(rateEveryOf(ruled, task));
    }
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', rateEvery: 0 }] }),
      'E_ARG',
      'tasks[0].rateEvery',
    );
  });

  it('refuses a label shared by two tasks, an empty label and a checkpoint of no task', () => {
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: ['toy', { name: 'lm', label: 'toy' }] }),
      'E_ARG',
      'tasks[1].label',
    );
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', label: 'a' }, 'toy', 'toy'] }),
      'E_ARG',
      'tasks[2].name',
    );
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', label: '' }] }),
      'E_ARG',
      'tasks[0].label',
    );
    expectLetheError(
      () => validateSweepConfig({ ...base, checkpoints: { toString: '/m' } }),
      'E_ARG',
      'checkpoints.toString',
    );
    const plain = validateSweepConfig(base);
    expect(checkpointOf(plain, 'toy')).toBeUndefined();
    expect(checkpointOf(plain, 'constructor')).toBeUndefined();
    expect(validateSweepConfig({ ...base, tasks: [{ name: 'toy', label: 'toy' }] }).tasks).toEqual([
      { name: 'toy', options: {} },
    ]);
  });

  it('gives a task its own prefill chunk, which its reproduce command carries', () => {
    const chunked = validateSweepConfig({
      ...config,
      tasks: [
        { name: 'toy', options: {}, prefillChunk: 4 },
        { name: 'lm', options: {} },
      ],
    });
    expect(prefillChunkOf(chunked, 'toy')).toBe(4);
    expect(prefillChunkOf(chunked, 'lm')).toBe(32);
    const key = { task: 'toy', policy: 'h2o', budget: 0.5, seed: 3 };
    const command = reproduceCommand(key, chunked);
    expect(command).toContain('--prefill-chunk 4');
    expect(parseEvalFlags(shellWords(command).slice(2))).toEqual(cellConfig(key, chunked));
    expectLetheError(
      () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', prefillChunk: 0 }] }),
      'E_ARG',
      'tasks[0].prefillChunk',
    );
  });

  it('gives a task its own seeds: its cells run with them, each reproducible alone', () => {
    const seeded = validateSweepConfig({
      ...config,
      tasks: [
        { name: 'toy', options: {}, seeds: [3, 4, 5] },
        { name: 'lm', options: {} },
      ],
    });
    expect(seedsOf(seeded, 'toy')).toEqual([3, 4, 5]);
    expect(seedsOf(seeded, 'lm')).toEqual([3, 1]);
    const cells = sweepCells(seeded);
    expect([...new Set(cells.filter((c) => c.task === 'toy').map((c) => c.seed))]).toEqual([
      3, 4, 5,
    ]);
    expect([...new Set(cells.filter((c) => c.task === 'lm').map((c) => c.seed))]).toEqual([3, 1]);
    const key = { task: 'toy', policy: 'h2o', budget: 0.5, seed: 4 };
    const parsed = parseEvalFlags(shellWords(reproduceCommand(key, seeded)).slice(2));
    expect(parsed).toEqual(cellConfig(key, seeded));
    expect(sweepCells(parsed)).toEqual([key]);
    for (const [seeds, argument] of [
      [[], 'tasks[0].seeds'],
      [[1, 1], 'tasks[0].seeds[1]'],
      [[-1], 'tasks[0].seeds[0]'],
    ] as const) {
      expectLetheError(
        () => validateSweepConfig({ ...base, tasks: [{ name: 'toy', seeds }] }),
        'E_ARG',
        argument,
      );
    }
  });

  it('carries a rate schedule through the command', () => {
    const rated = validateSweepConfig({ ...config, rateEvery: 16 });
    const key = { task: 'toy', policy: 'h2o', budget: 0.5, seed: 3 };
    const command = reproduceCommand(key, rated);
    expect(command).toContain('--budget 0.5 --rate-every 16 --seed 3');
    expect(parseEvalFlags(shellWords(command).slice(2))).toEqual(cellConfig(key, rated));
    expect(parseEvalFlags(shellWords(reproduceCommand(key, config)).slice(2)).rateEvery).toBe(null);
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

  it('round-trips policy options, directories and labels through the command', () => {
    const specs = validateSweepConfig({
      ...base,
      tasks: ['toy'],
      policies: [
        'full',
        { name: 'snapkv', label: 'snapkv-w8', options: { windowSize: 8, adakv: true } },
        { name: 'h2o', options: { slackFraction: 0.1 } },
        { name: 'ngc', dir: '/runs/ngc policy' },
        { name: 'ngc', label: 'ngc-b', dir: 'runs/ngc-b', options: { note: "it's" } },
        { name: 'namm', label: 'namm-moved', dir: 'runs/namm', transfer: true },
      ],
      checkpoints: { toy: '/runs/my model' },
    });
    const cells = sweepCells(specs);
    expect(cells).toHaveLength(1 + 5 * 2);
    for (const key of cells) {
      const command = reproduceCommand(key, specs);
      const parsed = parseEvalFlags(shellWords(command).slice(2));
      expect(parsed).toEqual(cellConfig(key, specs));
      expect(parsed.policies).toEqual([specs.policies.find((p) => p.label === key.policy)]);
      expect(sweepCells(parsed)).toEqual([key]);
    }
    const snap = reproduceCommand(
      { task: 'toy', policy: 'snapkv-w8', budget: 0.25, seed: 0 },
      specs,
    );
    expect(snap).toContain(
      `--policy snapkv --policy-options '{"windowSize":8,"adakv":true}' --policy-label snapkv-w8 --budget 0.25`,
    );
    const ngc = reproduceCommand({ task: 'toy', policy: 'ngc', budget: 0.5, seed: 0 }, specs);
    expect(ngc).toContain(`--policy ngc --policy-dir '/runs/ngc policy' --budget 0.5`);
    expect(ngc).not.toContain('--policy-label');
    expect(ngc).not.toContain('--policy-options');
    expect(ngc).not.toContain('--policy-transfer');
    const moved = reproduceCommand(
      { task: 'toy', policy: 'namm-moved', budget: 0.5, seed: 0 },
      specs,
    );
    expect(moved).toContain(
      '--policy namm --policy-dir runs/namm --policy-transfer true --policy-label namm-moved',
    );
    const full = reproduceCommand({ task: 'toy', policy: 'full', budget: 1, seed: 0 }, specs);
    expect(full).toContain('--policy full --budget 1 ');
    expectLetheError(
      () => reproduceCommand({ task: 'toy', policy: 'snapkv', budget: 0.5, seed: 0 }, specs),
      'E_ARG',
      'key.policy',
    );
    const words = shellWords(snap).slice(2);
    const badOptions = words.map((w, i) => (words[i - 1] === '--policy-options' ? '{x' : w));
    expectLetheError(() => parseEvalFlags(badOptions), 'E_ARG', '--policy-options');
    const badLabel = words.map((w, i) => (words[i - 1] === '--policy-label' ? 'Snap KV' : w));
    expectLetheError(() => parseEvalFlags(badLabel), 'E_ARG', 'policies[0].label');
    const movedWords = shellWords(moved).slice(2);
    const badTransfer = movedWords.map((w, i) =>
      movedWords[i - 1] === '--policy-transfer' ? 'yes' : w,
    );
    expectLetheError(() => parseEvalFlags(badTransfer), 'E_ARG', '--policy-transfer');
    const offWords = movedWords.map((w, i) =>
      movedWords[i - 1] === '--policy-transfer' ? 'false' : w,
    );
    expect(parseEvalFlags(offWords).policies[0]).not.toHaveProperty('transfer');
    // Nothing learned to transfer: refused, not ignored.
    const heuristic = [...shellWords(snap).slice(2), '--policy-transfer', 'true'];
    expectLetheError(() => parseEvalFlags(heuristic), 'E_ARG', 'policies[0].transfer');
  });

  it('rejects bad flags naming them', () => {
    const words = shellWords(
      reproduceCommand({ task: 'lm', policy: 'h2o', budget: 0.5, seed: 1 }, config),
    ).slice(2);
    expect(expectLetheError(() => parseEvalFlags([...words, '--nope', '1'])).argument).toBe(
      '--nope',
    );
    expect(expectLetheError(() => parseEvalFlags(words.slice(2))).argument).toBe('--task');
    expect(expectLetheError(() => parseEvalFlags([...words, '--budget', '0.5'])).argument).toBe(
      '--budget',
    );
    expect(expectLetheError(() => parseEvalFlags([...words, '--checkpoint'])).argument).toBe(
      '--checkpoint',
    );
    const budget = words.map((w, i) => (words[i - 1] === '--budget' ? '2' : w));
    const error = expectLetheError(() => parseEvalFlags(budget));
    expect([error.code, error.argument]).toEqual(['E_BUDGET', 'budgets[0]']);
    const seed = words.map((w, i) => (words[i - 1] === '--seed' ? 'one' : w));
    expect(expectLetheError(() => parseEvalFlags(seed)).argument).toBe('--seed');
    expect(
      expectLetheError(() =>
        reproduceCommand({ task: 'nope', policy: 'h2o', budget: 0.5, seed: 1 }, config),
      ).argument,
    ).toBe('key.task');
  });
});
