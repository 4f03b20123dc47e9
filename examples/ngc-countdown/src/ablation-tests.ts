import { holmAdjust, pairedAccuracy } from '@lethe/eval';
import type { EvalCell } from './eval-cells';
import { percent } from './percent';
import type { RunHistory } from './report-content';
import { settingsKey } from './settings-key';

/** An ablation run against the NGC run it differs from by its variant alone, at one rate. */
export interface AblationTest {
  readonly rate: number;
  /** Labels of the ablation run (`token-only`, `dropout`) and of its NGC run. */
  readonly ablation: string;
  readonly ngc: string;
  readonly variant: string;
  readonly accuracy: number;
  readonly ngcAccuracy: number;
  /** Problems only the ablation solved, and only NGC. */
  readonly onlyAblation: number;
  readonly onlyNgc: number;
  /** Exact McNemar p-value, and Holm-adjusted over the ablations tested at this rate. */
  readonly pValue: number;
  readonly adjustedP: number;
}

/**
 * Fig. 4's comparison with paired statistics: every `token-only` or `dropout` run of `runs`
 * against the `ngc` run whose settings equal its own but for the variant, at every rate both were
 * evaluated at (greedy NGC cells of `cells`), on the same problems — an exact McNemar test, the
 * p-values of one rate Holm-adjusted together (the leaderboard's rule for the policies of a budget).
 */
export function ablationTests(
  runs: readonly RunHistory[],
  cells: readonly EvalCell[],
): AblationTest[] {
  const ngcRuns = new Map(
    runs
      .filter((r) => r.settings.variant === 'ngc')
      .map((r) => [settingsKey(r.settings, ['variant']), r.label]),
  );
  const cellOf = (model: string, rate: number): EvalCell | undefined =>
    cells.find((c) => c.model === model && c.method === 'ngc' && c.rate === rate);
  const rates = [...new Set(cells.filter((c) => c.rate > 0).map((c) => c.rate))].sort();
  const tests: AblationTest[] = [];
  for (const rate of rates) {
    const atRate: Omit<AblationTest, 'adjustedP'>[] = [];
    for (const run of runs) {
      const { variant } = run.settings;
      if (variant !== 'token-only' && variant !== 'dropout') continue;
      const ngc = ngcRuns.get(settingsKey(run.settings, ['variant']));
      const mine = cellOf(run.label, rate);
      const theirs = ngc === undefined ? undefined : cellOf(ngc, rate);
      if (ngc === undefined || mine === undefined || theirs === undefined) continue;
      const paired = pairedAccuracy(
        mine.outcomes.map((o) => o.correct),
        theirs.outcomes.map((o) => o.correct),
      );
      atRate.push({
        rate,
        ablation: run.label,
        ngc,
        variant,
        accuracy: paired.accuracyA,
        ngcAccuracy: paired.accuracyB,
        onlyAblation: paired.onlyA,
        onlyNgc: paired.onlyB,
        pValue: paired.pValue,
      });
    }
    const adjusted = holmAdjust(atRate.map((t) => t.pValue));
    atRate.forEach((t, i) => tests.push({ ...t, adjustedP: adjusted[i]! }));
  }
  return tests;
}

/** The report's section of `tests` (none without tests). */
export function ablationSection(tests: readonly AblationTest[]): string[] {
  if (tests.length === 0) return [];
  return [
    '## Ablations against NGC, paired',
    '',
    'Each ablation against the NGC run trained with the same settings but its variant, on the same problems: exact McNemar test, Holm-adjusted over the ablations of a rate; ▲ / ▼ where the ablation is better / worse at α = 0.05.',
    '',
    '| ε | ablation | accuracy | NGC run | accuracy | only the ablation | only NGC | Holm p |',
    '|--:|---|--:|---|--:|--:|--:|--:|',
    ...tests.map((t) => {
      const mark = t.adjustedP > 0.05 ? '' : t.accuracy > t.ngcAccuracy ? ' ▲' : ' ▼';
      return `| ${t.rate} | ${t.ablation === t.variant ? t.ablation : `${t.ablation} (${t.variant})`} | ${percent(t.accuracy)}${mark} | ${t.ngc} | ${percent(t.ngcAccuracy)} | ${t.onlyAblation} | ${t.onlyNgc} | ${formatP(t.adjustedP)} |`;
    }),
    '',
  ];
}

/** A p-value as the leaderboard's report writes it: 2 decimals, in exponent form below 0.01. */
function formatP(p: number): string {
  return p >= 0.01 ? p.toFixed(2) : p.toExponential(1);
}
