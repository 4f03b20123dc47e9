import { LetheError } from '@lethe/core';
import { type ChartSeries, type ChartSpec, renderChartFigure, standaloneSvg } from '@lethe/eval';
import type { NgcStepMetrics } from '@lethe/policies-ngc/train';
import { ablationSection, ablationTests } from './ablation-tests';
import type { EvalCell, EvalCells } from './eval-cells';
import { interoceptionSection, interoceptionTests } from './interoception-tests';
import { percent } from './percent';
import { recordedTagTokens } from './run-tokenizer';
import { seedSection, seedSpreads } from './seed-spread';
import { settingsKey } from './settings-key';
import { type MethodSummary, summarize } from './summarize';
import type { TrainSettings } from './train-settings';

/** A training run's label, settings and per-step history (from its `lethe-ngc.json`). */
export interface RunHistory {
  readonly label: string;
  readonly settings: TrainSettings;
  readonly history: readonly NgcStepMetrics[];
}

/** The report: Markdown plus SVG figures by file name (linked from the Markdown). */
export interface NgcReport {
  readonly markdown: string;
  readonly figures: Readonly<Record<string, string>>;
}

const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
];

/** Updates averaged in the training curves (one update's 8 prompts are a noisy estimate). */
const SMOOTHING = 10;

/** The training settings that tell the runs apart, one row per run. */
function runsTable(runs: readonly RunHistory[]): string[] {
  if (runs.length === 0) return [];
  const logits = ({ logits: l }: TrainSettings): string =>
    l.kind === 'score' ? 'score' : `${l.kind} τ = ${l.temperature}`;
  return [
    '## Runs',
    '',
    '| run | variant | b | w | logits | prompts × G | updates | lr | retention | interoception | SFT warm-up | seed | starts from |',
    '|---|---|--:|--:|---|--:|--:|--:|---|---|--:|--:|---|',
    ...runs.map(
      ({ label, settings: s }) =>
        `| ${label} | ${s.variant} | ${s.blockSize} | ${s.window} | ${logits(s)} | ${s.promptsPerStep} × ${s.groupSize} | ${s.steps} | ${s.lr} | ${s.retention[0]} → ${s.retention.at(-1)} (${s.stageSteps} per stage) | ${s.interoception ? `yes (${recordedTagTokens(s)})` : 'no'} | ${s.sftWarmupSteps} | ${s.seed} | ${s.init === undefined ? 'task model' : `run \`${s.init}\``} |`,
    ),
    '',
  ];
}

/**
 * Labels of the runs the ablation ordering compares: those whose settings, variant aside, equal
 * a `token-only` or `dropout` run's (`undefined`, i.e. every NGC-family model, when no ablation
 * run is given).
 */
function ablationLabels(runs: readonly RunHistory[]): Set<string> | undefined {
  const key = ({ settings }: RunHistory): string => settingsKey(settings, ['variant']);
  const ablations = runs.filter(
    (r) => r.settings.variant === 'token-only' || r.settings.variant === 'dropout',
  );
  if (ablations.length === 0) return undefined;
  const keys = new Set(ablations.map(key));
  return new Set(
    runs.filter((r) => r.settings.variant !== 'no-evict' && keys.has(key(r))).map((r) => r.label),
  );
}

/** The summary of every cell against the reference full-cache run of `no-evict`. */
function summaries(results: EvalCells): (EvalCell & { summary: MethodSummary })[] {
  const reference = results.cells.find((c) => c.model === 'no-evict' && c.method === 'full');
  if (reference === undefined) return [];
  return results.cells.map((cell) => ({
    ...cell,
    summary: summarize(cell.outcomes, reference.outcomes),
  }));
}

/**
 * The NGC Countdown report: the comparison at ε = `mainRate` (the paper's Fig. 3 left), the
 * ablation ordering (Fig. 4) and each ablation paired with its NGC run at every rate
 * (`ablationTests`), each interoception run paired with its untagged twin (Fig. 6,
 * `interoceptionTests`), the spread over training seeds of a recipe run more than once
 * (`seedSpreads`), accuracy against peak cache size across rates (Fig. 3 right) and
 * the training curves (Fig. 5) of the runs named by `curveLabels` (default: all `runs`), which
 * are also the NGC-family models of the accuracy-vs-peak figure (the tables list every cell).
 *
 * @throws LetheError `E_ARG` naming `curveLabels` for a label not among `runs`.
 */
export function ngcReport(
  results: EvalCells,
  runs: readonly RunHistory[],
  mainRate: number,
  curveLabels: readonly string[] = runs.map((r) => r.label),
): NgcReport {
  const curveRuns = curveLabels.map((label) => {
    const run = runs.find((r) => r.label === label);
    if (run === undefined) {
      throw new LetheError('E_ARG', `names "${label}", which is not a run`, 'curveLabels');
    }
    return run;
  });
  const cells = summaries(results);
  const full = cells.find((c) => c.model === 'no-evict' && c.method === 'full');
  const lines: string[] = ['# NGC on Countdown', ''];
  lines.push(
    `${results.settings.examples} held-out problems (task seed ${results.settings.evalSeed}), greedy decoding; every method evicts at the same rounds (every δ = ${results.settings.cadence} tokens, prefill included) and the same rate ε; an NGC-trained model evicts with the block size b and window w it was trained with (below), SnapKV observes the last w = ${results.settings.window} queries. Peak reduction is eq. 7: the mean over problems of the full-cache run's peak KV entries over the method's.`,
    '',
    ...runsTable(runs),
    `## Comparison at ε = ${mainRate} per round`,
    '',
    '| model | method | accuracy | ± SE | of full cache | peak reduction | mean peak entries | mean completion |',
    '|---|---|--:|--:|--:|--:|--:|--:|',
  );
  const rows = cells.filter((c) => c.rate === 0 || c.rate === mainRate);
  for (const { model, method, summary: s } of rows) {
    lines.push(
      `| ${model} | ${method} | ${percent(s.accuracy)} | ${percent(s.accuracySe)} | ${full ? percent(s.accuracy / full.summary.accuracy) : '–'} | ${s.peakReduction.toFixed(2)}× | ${s.meanPeak.toFixed(1)} | ${s.meanCompletion.toFixed(1)} |`,
    );
  }
  lines.push('');
  const ablation = ablationLabels(runs);
  const family = rows
    .filter((c) => c.method === 'ngc' && (ablation === undefined || ablation.has(c.model)))
    .sort((a, b) => a.summary.accuracy - b.summary.accuracy);
  if (family.length > 1) {
    const ordered = family
      .map((c, i) => {
        const text = `${c.model} ${percent(c.summary.accuracy)}`;
        if (i === 0) return text;
        const tie = percent(family[i - 1]!.summary.accuracy) === percent(c.summary.accuracy);
        return `${tie ? '=' : '<'} ${text}`;
      })
      .join(' ');
    lines.push(
      `Ablation ordering at ε = ${mainRate} (paper, Fig. 4: dropout 2.5% < token-only 35.7% < NGC 49.6%): ${ordered}.`,
      '',
    );
  }
  lines.push(
    ...ablationSection(ablationTests(runs, cells)),
    ...interoceptionSection(interoceptionTests(runs, cells)),
    ...seedSection(seedSpreads(runs, cells)),
  );
  const rates = [...new Set(cells.filter((c) => c.rate > 0).map((c) => c.rate))].sort();
  lines.push(
    '## Across eviction rates (accuracy, peak reduction)',
    '',
    `| model | method | ${rates.map((r) => `ε = ${r}`).join(' | ')} |`,
    `|---|---|${rates.map(() => '--:').join('|')}|`,
  );
  const methods = [
    ...new Set(cells.filter((c) => c.rate > 0).map((c) => `${c.model}|${c.method}`)),
  ];
  for (const key of methods) {
    const [model, method] = key.split('|') as [string, string];
    const entries = rates.map((rate) => {
      const cell = cells.find((c) => c.model === model && c.method === method && c.rate === rate);
      return cell
        ? `${percent(cell.summary.accuracy)} (${cell.summary.peakReduction.toFixed(2)}×)`
        : '–';
    });
    lines.push(`| ${model} | ${method} | ${entries.join(' | ')} |`);
  }
  lines.push('');
  const figures: Record<string, string> = {};
  // The figure shows the NGC-family models of the plotted runs (all of them without runs).
  const plotted = new Set(curveRuns.map((r) => r.label));
  const figureCells = cells.filter(
    (c) => c.method !== 'ngc' || runs.length === 0 || plotted.has(c.model),
  );
  figures['accuracy-vs-peak.svg'] = standaloneSvg(renderChartFigure(accuracyVsPeak(figureCells)));
  lines.push(
    '## Accuracy against peak cache size',
    '',
    '![accuracy vs peak](accuracy-vs-peak.svg)',
    '',
  );
  for (const [name, metric, label, unit] of [
    [
      'training-reward.svg',
      (m: NgcStepMetrics) => m.reward,
      'reward (mean, after the min-length penalty)',
      '',
    ],
    [
      'training-grad-norm.svg',
      (m: NgcStepMetrics) => m.gradNorm,
      'gradient norm (before clipping)',
      '',
    ],
    [
      'training-eviction-rate.svg',
      (m: NgcStepMetrics) => 100 * m.evictionRate,
      'eviction rate ε',
      '%',
    ],
  ] as const) {
    figures[name] = standaloneSvg(
      renderChartFigure(trainingCurve(curveRuns, name, metric, label, unit)),
    );
    lines.push(`![${label}](${name})`, '');
  }
  return { markdown: `${lines.join('\n')}\n`, figures };
}

function accuracyVsPeak(cells: readonly (EvalCell & { summary: MethodSummary })[]): ChartSpec {
  const groups = new Map<string, (EvalCell & { summary: MethodSummary })[]>();
  for (const cell of cells) {
    const key =
      cell.method === 'full'
        ? `${cell.model} full cache`
        : cell.method === 'ngc'
          ? `${cell.model} (NGC greedy)`
          : `${cell.method} (${cell.model})`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  // One colour per method (per model for NGC and the full cache); heuristics on the RL baseline dashed.
  const colors = new Map<string, string>();
  const colorOf = (name: string): string => {
    if (!colors.has(name)) colors.set(name, COLORS[colors.size % COLORS.length]!);
    return colors.get(name)!;
  };
  const series: ChartSeries[] = [...groups].map(([key, members]) => ({
    key,
    label: key,
    color: colorOf(
      members[0]!.method === 'ngc' || members[0]!.method === 'full' ? key : members[0]!.method,
    ),
    dash: members[0]!.method !== 'ngc' && members[0]!.model === 'no-evict' ? '6 4' : 'none',
    reference: members[0]!.method === 'full',
    points: members
      .sort((a, b) => a.summary.meanPeak - b.summary.meanPeak)
      .map((c) => ({
        x: c.summary.meanPeak,
        y: 100 * c.summary.accuracy,
        yError: 100 * c.summary.accuracySe,
        note: `${key} ε=${c.rate}: ${percent(c.summary.accuracy)}, peak ${c.summary.meanPeak.toFixed(0)}`,
      })),
  }));
  return {
    id: 'accuracy-vs-peak',
    title: 'Countdown accuracy against mean peak KV entries',
    caption: 'One point per eviction rate ε; error bars ±1 SE; dashed lines: full cache.',
    xLabel: 'mean peak KV entries (all layers and heads)',
    yLabel: 'accuracy',
    yUnit: '%',
    yFromZero: true,
    series,
  };
}

/** What one update of the plotted runs samples: prompts × rollouts, one figure or per run. */
function rolloutsText(runs: readonly RunHistory[]): string {
  const shapes = [
    ...new Set(runs.map(({ settings: s }) => `${s.promptsPerStep} prompts × ${s.groupSize}`)),
  ];
  return shapes.length === 1
    ? `each update ${shapes[0]} rollouts`
    : 'rollouts per update: the runs table';
}

function trainingCurve(
  runs: readonly RunHistory[],
  id: string,
  metric: (m: NgcStepMetrics) => number,
  label: string,
  unit: string,
): ChartSpec {
  return {
    id: id.replace('.svg', ''),
    title: `Training: ${label}`,
    caption: `Mean over the last ${SMOOTHING} updates (${rolloutsText(runs)}).`,
    xLabel: 'update',
    yLabel: label,
    yUnit: unit,
    yFromZero: true,
    series: runs.map((run, i) => ({
      key: run.label,
      label: run.label,
      color: COLORS[i % COLORS.length]!,
      dash: 'none',
      reference: false,
      points: run.history.map((m, i) => {
        const window = run.history.slice(Math.max(0, i + 1 - SMOOTHING), i + 1);
        const y = window.reduce((sum, w) => sum + metric(w), 0) / window.length;
        return { x: m.step, y, yError: 0, note: `${run.label} step ${m.step}: ${metric(m)}` };
      }),
    })),
  };
}
