import { type ChartSeries, type ChartSpec, renderChartFigure, standaloneSvg } from '@lethe/eval';
import type { NammGenerationRecord } from '@lethe/policies-namm/train';

/** What {@link evolutionReport} writes: Markdown linking its figures, and the figures by file name. */
export interface EvolutionReport {
  readonly markdown: string;
  readonly figures: Readonly<Record<string, string>>;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function series(
  key: string,
  color: string,
  history: readonly NammGenerationRecord[],
  y: (r: NammGenerationRecord) => number,
  yError?: (r: NammGenerationRecord) => number,
): ChartSeries {
  return {
    key,
    label: key,
    color,
    dash: 'none',
    reference: false,
    points: history.map((r) => ({
      x: r.generation,
      y: y(r),
      ...(yError === undefined ? {} : { yError: yError(r) }),
      note: `${key}, generation ${r.generation}: ${y(r).toFixed(3)}`,
    })),
  };
}

function chart(
  id: string,
  title: string,
  caption: string,
  yLabel: string,
  s: ChartSeries[],
): ChartSpec {
  return {
    id,
    title,
    caption,
    xLabel: 'generation',
    yLabel,
    yUnit: '',
    yFromZero: true,
    series: s,
  };
}

/**
 * The paper's Fig. 4 for one evolution run — the population's fitness (mean ± standard deviation
 * and best) and the CMA-ES mean's normalised score on each task, per generation — and the
 * relative cache size of the population and of the mean, from the run's history.
 */
export function evolutionReport(history: readonly NammGenerationRecord[]): EvolutionReport {
  const tasks = [...new Set(history.flatMap((r) => Object.keys(r.meanScores)))];
  const population = chart(
    'population-fitness',
    'Population fitness per generation',
    'Fitness is the normalised score (the task score divided by the full cache’s on the same prompts), averaged over the stage’s tasks; error bars: the population’s standard deviation.',
    'fitness',
    [
      series(
        'population mean',
        COLORS[0]!,
        history,
        (r) => r.fitnessMean,
        (r) => r.fitnessStd,
      ),
      series('population best', COLORS[1]!, history, (r) => r.fitnessBest),
    ],
  );
  const mean = chart(
    'mean-scores',
    'The CMA-ES mean per generation',
    'The normalised score of the distribution’s mean on each task’s prompts of the generation, and its fitness.',
    'normalised score',
    [
      ...tasks.map((task, i) =>
        series(
          task,
          COLORS[(i + 2) % COLORS.length]!,
          history.filter((r) => task in r.meanScores),
          (r) => r.meanScores[task]!,
        ),
      ),
      series('fitness', COLORS[0]!, history, (r) => r.meanFitness),
    ],
  );
  const cache = chart(
    'cache-size',
    'Cache size per generation',
    'Live KV entries at the end of each completion over the full cache’s, averaged over prompts (and members).',
    'relative cache size',
    [
      series('population', COLORS[0]!, history, (r) => r.populationCacheSize),
      series('mean', COLORS[1]!, history, (r) => r.meanCacheSize),
    ],
  );
  const figures = {
    'population-fitness.svg': standaloneSvg(renderChartFigure(population)),
    'mean-scores.svg': standaloneSvg(renderChartFigure(mean)),
    'cache-size.svg': standaloneSvg(renderChartFigure(cache)),
  };
  const last = history.at(-1);
  const rows = history.map(
    (r) =>
      `| ${r.generation} | ${r.stage} | ${r.fitnessMean.toFixed(3)} ± ${r.fitnessStd.toFixed(3)} | ${r.fitnessBest.toFixed(3)} | ${r.meanFitness.toFixed(3)} | ${r.populationCacheSize.toFixed(3)} | ${r.meanCacheSize.toFixed(3)} | ${r.sigma.toFixed(4)} |`,
  );
  const markdown = [
    '# NAMM evolution',
    '',
    last === undefined
      ? 'No generation has run yet.'
      : `${history.length} generations; at the last, the population's fitness ${last.fitnessMean.toFixed(3)} ± ${last.fitnessStd.toFixed(3)} (best ${last.fitnessBest.toFixed(3)}), the mean's ${last.meanFitness.toFixed(3)} at a relative cache size of ${last.meanCacheSize.toFixed(3)}.`,
    '',
    '![Population fitness](population-fitness.svg)',
    '![The CMA-ES mean](mean-scores.svg)',
    '![Cache size](cache-size.svg)',
    '',
    '| generation | stage | population fitness (mean ± std) | best | mean’s fitness | population cache | mean’s cache | σ |',
    '| --: | --: | --: | --: | --: | --: | --: | --: |',
    ...rows,
    '',
  ].join('\n');
  return { markdown, figures };
}
