import type { EvalCell } from './eval-cells';
import { percent } from './percent';
import type { RunHistory } from './report-content';
import { formatP, pairMark, type RunPairTest, runPairTests } from './run-pairs';

/**
 * Fig. 4's comparison with paired statistics: every `token-only` or `dropout` run of `runs`
 * against the `ngc` run whose settings equal its own but for the variant, at every rate both were
 * evaluated at (`runPairTests`: exact McNemar, Holm over the ablations of a rate).
 */
export function ablationTests(
  runs: readonly RunHistory[],
  cells: readonly EvalCell[],
): RunPairTest[] {
  return runPairTests(runs, cells, {
    choice: ['variant'],
    tested: (s) => s.variant === 'token-only' || s.variant === 'dropout',
    partner: (s) => s.variant === 'ngc',
  });
}

/** The report's section of `tests` (none without tests). */
export function ablationSection(tests: readonly RunPairTest[]): string[] {
  if (tests.length === 0) return [];
  return [
    '## Ablations against NGC, paired',
    '',
    'Each ablation against the NGC run trained with the same settings but its variant, on the same problems: exact McNemar test, Holm-adjusted over the ablations of a rate; ▲ / ▼ where the ablation is better / worse at α = 0.05.',
    '',
    '| ε | ablation | accuracy | NGC run | accuracy | only the ablation | only NGC | Holm p |',
    '|--:|---|--:|---|--:|--:|--:|--:|',
    ...tests.map((t) => {
      const { variant } = t.settings;
      return `| ${t.rate} | ${t.run === variant ? t.run : `${t.run} (${variant})`} | ${percent(t.accuracy)}${pairMark(t)} | ${t.partner} | ${percent(t.partnerAccuracy)} | ${t.onlyRun} | ${t.onlyPartner} | ${formatP(t.adjustedP)} |`;
    }),
    '',
  ];
}
