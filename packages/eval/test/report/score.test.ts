import { describe, expect, it } from 'vitest';
import { aggregate } from '../../src/metrics/index';
import { meanInterval, wilsonInterval } from '../../src/report/interval';
import { type ReportRow, reportRows } from '../../src/report/rows';
import { rowScore, SCORE_METRICS } from '../../src/report/score';
import { cell, fakeSweep } from './fixture';

const [ACCURACY, PERPLEXITY] = SCORE_METRICS as [
  (typeof SCORE_METRICS)[number],
  (typeof SCORE_METRICS)[number],
];

function row(metrics: Partial<ReportRow['metrics']>, outcomes?: ReportRow['outcomes']): ReportRow {
  const { outcomes: _, ...base } = reportRows(fakeSweep())[0]!;
  return {
    ...base,
    metrics: { ...base.metrics, accuracy: undefined, ...metrics },
    ...(outcomes === undefined ? {} : { outcomes }),
  };
}

describe('rowScore', () => {
  it('gives accuracy in percent with the Wilson interval of the pooled outcomes', () => {
    const score = rowScore(
      row({ accuracy: aggregate([1, 0, 0, 1]) }, { correct: 19, total: 32 }),
      ACCURACY,
    )!;
    const wilson = wilsonInterval(19, 32);
    expect(score.method).toBe('wilson');
    expect(score.n).toBe(32);
    expect(score.mean).toBe(50);
    expect(score.interval.low).toBeCloseTo(wilson.low * 100, 12);
    expect(score.interval.high).toBeCloseTo(wilson.high * 100, 12);
  });

  it('recovers the count from a binary aggregate when the cells carry no outcomes', () => {
    const outcomes = [...Array(7).fill(1), ...Array(25).fill(0)];
    const score = rowScore(row({ accuracy: aggregate(outcomes) }), ACCURACY)!;
    expect(score.method).toBe('wilson');
    expect(score.interval.low).toBeCloseTo(wilsonInterval(7, 32).low * 100, 12);
    expect(score.interval.high).toBeCloseTo(wilsonInterval(7, 32).high * 100, 12);
    // 0 of 32 is not "0 ± 0": Wilson's upper bound is z²/(n + z²).
    expect(
      rowScore(row({ accuracy: aggregate(Array(32).fill(0)) }), ACCURACY)!.interval.high,
    ).toBeGreaterThan(10);
  });

  it('falls back to mean ± t·SE for accuracy over several samples per example', () => {
    // Per-example fractions of 4 samples: not a proportion of single outcomes.
    const fractions = aggregate([0.25, 0.5, 1, 0.75, 0, 0.5]);
    const score = rowScore(row({ accuracy: fractions }), ACCURACY)!;
    const t = meanInterval(fractions);
    expect(score.method).toBe('t');
    expect(score.interval.low).toBeCloseTo(t.low * 100, 12);
    expect(score.interval.high).toBeCloseTo(t.high * 100, 12);
  });

  it('cuts a t interval of accuracy to 0–100 %, where a near-0 or near-1 mean would pass it', () => {
    // A suite average: 0.1 % with a standard error wider than the mean.
    const low = { mean: 0.001, stderr: 0.001, n: 1536 };
    expect(meanInterval(low).low).toBeLessThan(0);
    const score = rowScore(row({ accuracy: low }), ACCURACY)!;
    expect(score.method).toBe('t');
    expect(score.interval.low).toBe(0);
    expect(score.interval.high).toBeCloseTo(meanInterval(low).high * 100, 12);
    const high = { mean: 0.999, stderr: 0.001, n: 1536 };
    expect(rowScore(row({ accuracy: high }), ACCURACY)!.interval.high).toBe(100);
    // Perplexity has no such range.
    const spread = { mean: 0.5, stderr: 1, n: 8 };
    expect(rowScore(row({ perplexity: spread }), PERPLEXITY)!.interval.low).toBeLessThan(0);
  });

  it('gives perplexity with mean ± t·SE and nothing for a row without the score', () => {
    const value = { mean: 1.91, stderr: 0.02, n: 32 };
    const score = rowScore(row({ perplexity: value }), PERPLEXITY)!;
    expect(score).toEqual({ mean: 1.91, interval: meanInterval(value), n: 32, method: 't' });
    expect(rowScore(row({}), ACCURACY)).toBeUndefined();
  });

  it('pools the outcomes of every seed of a row', () => {
    const at = (seed: number, accuracy: number) => {
      const result = cell('countdown', 'h2o', 0.5, {
        accuracy,
        peak: 10,
        live: 8,
        fullPeak: 20,
        tokensPerSecond: 1,
      });
      return { ...result, key: { ...result.key, seed } };
    };
    const [pooled] = reportRows({ ...fakeSweep(), cells: [at(0, 0.25), at(1, 0.5)] });
    expect(pooled!.outcomes).toEqual({ correct: 64 + 128, total: 512 });
    const score = rowScore(pooled!, ACCURACY)!;
    expect(score.n).toBe(512);
    expect(score.interval.low).toBeCloseTo(wilsonInterval(192, 512).low * 100, 12);
  });
});
