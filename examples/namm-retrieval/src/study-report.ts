import {
  type Aggregate,
  type ChartSeries,
  type ChartSpec,
  renderChartFigure,
  standaloneSvg,
} from '@lethe/eval';
import type { LayerProfile } from './layer-profile';
import {
  MATCHED_BASELINES,
  type MatchedBaseline,
  type MatchedCell,
  type MatchedStudy,
} from './matched-budgets';

/** Markdown and its figures by file name. */
export interface StudyReport {
  readonly markdown: string;
  readonly figures: Readonly<Record<string, string>>;
}

const COLORS = {
  namm: '#d62728',
  h2o: '#1f77b4',
  l2norm: '#2ca02c',
  snapkv: '#9467bd',
  full: '#7f7f7f',
};
/** Each baseline's name in the table and the figure. */
const BASELINE_LABELS: Record<MatchedBaseline, string> = {
  h2o: 'H2O',
  l2norm: 'L2',
  snapkv: 'SnapKV',
};
/** The baselines' names as a list in prose: "H2O, L2 and SnapKV". */
const BASELINE_PROSE = `${MATCHED_BASELINES.slice(0, -1)
  .map((b) => BASELINE_LABELS[b])
  .join(', ')} and ${BASELINE_LABELS[MATCHED_BASELINES.at(-1)!]}`;
const LAYER_COLORS = ['#d62728', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function percent(a: Aggregate): string {
  return `${(100 * a.mean).toFixed(1)} % ± ${(100 * a.stderr).toFixed(1)}`;
}

function cellText(cell: MatchedCell): string {
  return `${percent(cell.accuracy)} (${cell.normalised.toFixed(3)})`;
}

/** A baseline's cell, with the size it realised (its own rounding and slack may add to NAMM's). */
function baselineText(cell: MatchedCell): string {
  return `${cellText(cell)} at ${(100 * cell.realised).toFixed(1)} %`;
}

function scoreSeries(
  key: keyof typeof COLORS,
  label: string,
  points: { x: number; y: number }[],
): ChartSeries {
  return {
    key,
    label,
    color: COLORS[key],
    dash: key === 'namm' ? 'none' : '4 3',
    reference: key === 'full',
    points: points.map((p) => ({
      ...p,
      note: `${label}: normalised ${p.y.toFixed(3)} at ${(100 * p.x).toFixed(1)} % of the peak`,
    })),
  };
}

function matchedFigure(study: MatchedStudy): ChartSpec {
  const baseline = (key: MatchedBaseline) =>
    study.rows.map((r) => ({ x: r.baselines[key].realised, y: r.baselines[key].normalised }));
  return {
    id: 'matched-budgets',
    title: `NAMM, ${BASELINE_PROSE} at the same cache size`,
    caption: `Normalised score (accuracy over the full cache’s on the same prompts) against the realised cache size (peak over the full cache’s peak, mean over examples); ${BASELINE_PROSE} run at the budget NAMM realised (the paper’s Fig. 5, SnapKV added).`,
    xLabel: 'realised cache size (fraction of the full peak)',
    yLabel: 'normalised score',
    yUnit: '',
    yFromZero: true,
    series: [
      scoreSeries(
        'namm',
        'NAMM',
        study.rows.map((r) => ({ x: r.namm.realised, y: r.namm.normalised })),
      ),
      ...MATCHED_BASELINES.map((b) => scoreSeries(b, BASELINE_LABELS[b], baseline(b))),
      scoreSeries('full', 'full cache', [{ x: 1, y: 1 }]),
    ],
  };
}

function layerFigure(
  id: string,
  title: string,
  caption: string,
  yLabel: string,
  profiles: readonly LayerProfile[],
  y: (profile: LayerProfile, layer: number) => number,
): ChartSpec {
  return {
    id,
    title,
    caption,
    xLabel: 'layer',
    yLabel,
    yUnit: '',
    yFromZero: true,
    series: profiles.map((profile, i) => ({
      key: `budget-${profile.budget}`,
      label: `NAMM, budget ${profile.budget}`,
      color: LAYER_COLORS[i % LAYER_COLORS.length]!,
      dash: 'none',
      reference: false,
      points: profile.layers.map((_, layer) => ({
        x: layer,
        y: y(profile, layer),
        note: `layer ${layer}, budget ${profile.budget}: ${y(profile, layer).toFixed(3)}`,
      })),
    })),
  };
}

/**
 * The study's report: the matched-budget table and figure (the paper's Fig. 5) and, per layer,
 * the cache NAMM retains and the age of what it retains (Fig. 6).
 */
export function studyReport(
  study: MatchedStudy,
  profiles: readonly LayerProfile[],
  command: string,
): StudyReport {
  const rows = study.rows.map(
    (r) =>
      `| ${r.budget} | ${(100 * r.namm.realised).toFixed(1)} % | ${(100 * r.namm.meanSize).toFixed(1)} % | ${cellText(r.namm)} | ${r.namm.tokensPerSecond.toFixed(0)} | ${r.matchedBudget} | ${MATCHED_BASELINES.map((b) => baselineText(r.baselines[b])).join(' | ')} |`,
  );
  const layerRows = profiles.flatMap((p) =>
    p.layers.map(
      (l, layer) =>
        `| ${p.budget} | ${layer} | ${(100 * l.retained).toFixed(1)} % | ${l.age.toFixed(1)} | ${l.fullAge.toFixed(1)} |`,
    ),
  );
  const markdown = [
    '# NAMM at matched cache sizes',
    '',
    `Regenerate with \`${command}\`.`,
    '',
    `Full cache: ${percent(study.full)}, ${study.fullTokensPerSecond.toFixed(0)} tokens/s (prefill included, one wasm thread). Each cell: accuracy ± standard error (normalised score: over the full cache's). NAMM's realised size is its peak over the full cache's peak (mean over examples), its mean size the mean live entries over the full cache's; ${BASELINE_PROSE} run at NAMM's realised size rounded up to 0.001 (the matched budget) and may realise more (shown after “at”): never less memory than NAMM.`,
    '',
    `| NAMM budget | NAMM realised | NAMM mean size | NAMM | NAMM tokens/s | matched budget | ${MATCHED_BASELINES.map((b) => BASELINE_LABELS[b]).join(' | ')} |`,
    `| --: | --: | --: | --: | --: | --: |${' --: |'.repeat(MATCHED_BASELINES.length)}`,
    ...rows,
    '',
    '![Matched budgets](matched-budgets.svg)',
    '',
    '## Per layer (Fig. 6)',
    '',
    'At the end of each completion (each example alone): the live entries over the tokens, and the mean age (tokens since written) of the live entries next to the full cache’s.',
    '',
    '| NAMM budget | layer | retained | mean age | full cache’s mean age |',
    '| --: | --: | --: | --: | --: |',
    ...layerRows,
    '',
    '![Retained cache per layer](layer-retained.svg)',
    '![Token age per layer](layer-age.svg)',
    '',
  ].join('\n');
  const figures = {
    'matched-budgets.svg': standaloneSvg(renderChartFigure(matchedFigure(study))),
    'layer-retained.svg': standaloneSvg(
      renderChartFigure(
        layerFigure(
          'layer-retained',
          'Retained cache per layer',
          'Live entries over the tokens at the end of each completion, mean over examples and KV heads.',
          'retained fraction',
          profiles,
          (p, layer) => p.layers[layer]!.retained,
        ),
      ),
    ),
    'layer-age.svg': standaloneSvg(
      renderChartFigure(
        layerFigure(
          'layer-age',
          'Token age per layer',
          'Mean age of the live entries at the end of each completion (the full cache: half the sequence).',
          'mean age (tokens)',
          profiles,
          (p, layer) => p.layers[layer]!.age,
        ),
      ),
    ),
  };
  return { markdown, figures };
}
