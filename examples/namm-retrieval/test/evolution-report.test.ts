import type { NammGenerationRecord } from '@lethe/policies-namm/train';
import { describe, expect, it } from 'vitest';
import { evolutionReport } from '../src/evolution-report';

const record = (generation: number, stage: number, meanScores: Record<string, number>) =>
  ({
    generation,
    stage,
    fitness: [0.5, Number.NaN, 0.7],
    fitnessMean: 0.6,
    fitnessStd: 0.1,
    fitnessBest: 0.7,
    meanScores,
    meanFitness: 0.65,
    populationCacheSize: 0.3,
    meanCacheSize: 0.25,
    sigma: 0.06,
    seconds: 1,
  }) satisfies NammGenerationRecord;

describe('evolutionReport', () => {
  const history = [record(1, 0, { a: 0.6 }), record(2, 1, { a: 0.7, b: 0.5 })];
  const report = evolutionReport(history);

  it('draws the paper’s Fig. 4 and the cache size as standalone SVG files', () => {
    expect(Object.keys(report.figures)).toEqual([
      'population-fitness.svg',
      'mean-scores.svg',
      'cache-size.svg',
    ]);
    for (const svg of Object.values(report.figures)) {
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    }
    // One series per task (a task joins at the stage that adds it), and the mean's fitness.
    const mean = report.figures['mean-scores.svg']!;
    expect(mean).toContain('data-series="a"');
    expect(mean).toContain('data-series="b"');
    expect(mean).toContain('data-series="fitness"');
  });

  it('tabulates every generation and links the figures', () => {
    expect(report.markdown).toContain(
      '| 2 | 1 | 0.600 ± 0.100 | 0.700 | 0.650 | 0.300 | 0.250 | 0.0600 |',
    );
    expect(report.markdown).toContain('![Population fitness](population-fitness.svg)');
    expect(report.markdown).toContain('2 generations; at the last');
    expect(evolutionReport([]).markdown).toContain('No generation has run yet.');
  });
});
