import { LetheError } from '@lethe/core';
import { describe, expect, it } from 'vitest';
import type { SweepResults } from '../../src/harness/results';
import { aggregate } from '../../src/metrics/index';
import { reportRows } from '../../src/report/index';
import { BUDGETS, cell, fakeSweep, POLICIES } from './fixture';

describe('reportRows', () => {
  it('has one row per task × policy × budget, full cache first, budgets descending', () => {
    const rows = reportRows(fakeSweep());
    expect(rows).toHaveLength(2 * (1 + POLICIES.length * BUDGETS.length));
    expect(rows.slice(0, 4).map((row) => [row.task, row.policy, row.budget])).toEqual([
      ['countdown', 'full', 1],
      ['countdown', 'streaming-llm', 0.75],
      ['countdown', 'streaming-llm', 0.5],
      ['countdown', 'streaming-llm', 0.25],
    ]);
    expect(rows[10]!.task).toBe('lm');
    expect(rows[10]!.policy).toBe('full');
  });

  it('puts the full cache first even when it comes last in the results', () => {
    const sweep = fakeSweep();
    const reversed = { ...sweep, cells: [...sweep.cells].reverse() };
    const rows = reportRows(reversed);
    expect(rows[0]!.task).toBe('lm');
    expect(rows[0]!.policy).toBe('full');
    expect(rows[1]!.policy).toBe('snapkv');
  });

  it('pools seeds exactly as one aggregate over all their examples', () => {
    const outcomes = [
      [1, 0, 1, 1, 0],
      [0, 0, 1, 0, 1, 1, 0],
    ];
    const base = cell('countdown', 'h2o', 0.5, {
      accuracy: 0.5,
      peak: 100,
      live: 80,
      fullPeak: 200,
      tokensPerSecond: 10,
    });
    const seeded = outcomes.map((values, seed) => ({
      ...base,
      key: { ...base.key, seed: 7 - seed },
      metrics: { ...base.metrics, accuracy: aggregate(values) },
      command: `lethe eval --seed ${7 - seed}`,
    }));
    const sweep: SweepResults = { ...fakeSweep(), cells: seeded };
    const [row] = reportRows(sweep);
    const direct = aggregate(outcomes.flat());
    expect(row!.seeds).toEqual([6, 7]);
    expect(row!.commands).toEqual(['lethe eval --seed 6', 'lethe eval --seed 7']);
    expect(row!.metrics.accuracy!.n).toBe(12);
    expect(row!.metrics.accuracy!.mean).toBeCloseTo(direct.mean, 14);
    expect(row!.metrics.accuracy!.stderr).toBeCloseTo(direct.stderr, 14);
    expect(row!.metrics.perplexity).toBeUndefined();
  });

  it('pools per-example outcomes only where every cell has one sequence per example', () => {
    const sweep = fakeSweep();
    const [full] = reportRows(sweep);
    expect(full!.outcomes).toEqual({ correct: 131, total: 256 });
    const lm = reportRows(sweep).find((row) => row.task === 'lm')!;
    expect(lm.outcomes).toBeUndefined();
    const first = sweep.cells[0]!;
    const twoSamples = { ...first, sequences: [...first.sequences!, ...first.sequences!] };
    expect(reportRows({ ...sweep, cells: [twoSamples] })[0]!.outcomes).toBeUndefined();
    const { sequences: _, ...without } = first;
    expect(reportRows({ ...sweep, cells: [without] })[0]!.outcomes).toBeUndefined();
  });

  it('rejects other formats and malformed cells with E_FORMAT naming the field', () => {
    const sweep = fakeSweep();
    const expectFormat = (results: unknown, argument: string) => {
      try {
        reportRows(results as SweepResults);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(LetheError);
        expect((error as LetheError).code).toBe('E_FORMAT');
        expect((error as LetheError).argument).toBe(argument);
      }
    };
    expectFormat({ ...sweep, version: 1 }, 'results');
    expectFormat({ ...sweep, format: 'other' }, 'results');
    expectFormat(null, 'results');
    const broken = (metrics: object) => ({
      ...sweep,
      cells: [
        sweep.cells[0],
        { ...sweep.cells[1]!, metrics: { ...sweep.cells[1]!.metrics, ...metrics } },
      ],
    });
    expectFormat(
      broken({ accuracy: { mean: Number.NaN, stderr: 0, n: 3 } }),
      'results.cells[1].metrics.accuracy',
    );
    expectFormat(
      broken({ tokensPerSecond: undefined }),
      'results.cells[1].metrics.tokensPerSecond',
    );
    expectFormat(
      broken({ peakLive: { mean: 1, stderr: -1, n: 3 } }),
      'results.cells[1].metrics.peakLive',
    );
    expectFormat(
      { ...sweep, cells: [{ ...sweep.cells[0]!, key: { ...sweep.cells[0]!.key, seed: 0.5 } }] },
      'results.cells[0].key',
    );
    expectFormat(
      { ...sweep, cells: [{ ...sweep.cells[0]!, command: 3 }] },
      'results.cells[0].command',
    );
    expectFormat(
      { ...sweep, cells: [{ ...sweep.cells[0]!, sequences: {} }] },
      'results.cells[0].sequences',
    );
    expectFormat(
      {
        ...sweep,
        cells: [{ ...sweep.cells[0]!, sequences: [{ example: 0, correct: true }, { example: 1 }] }],
      },
      'results.cells[0].sequences[1]',
    );
  });
});
