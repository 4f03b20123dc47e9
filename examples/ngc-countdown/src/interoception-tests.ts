import type { EvalCell } from './eval-cells';
import { percent } from './percent';
import type { RunHistory } from './report-content';
import { formatP, pairMark, type RunPairTest, runPairTests } from './run-pairs';

/**
 * Fig. 6's comparison with paired statistics: every run of `runs` trained with the eviction-rate
 * tag in its prompts against the run whose settings equal its own but for the tag (and how the tag
 * is tokenized), at every rate both were evaluated at (`runPairTests`: exact McNemar, Holm over the
 * tagged runs of a rate). Each is evaluated as it was trained: the tagged run with the tag of the
 * rate it is evaluated at.
 */
export function interoceptionTests(
  runs: readonly RunHistory[],
  cells: readonly EvalCell[],
): RunPairTest[] {
  return runPairTests(runs, cells, {
    choice: ['interoception', 'tagTokens'],
    tested: (s) => s.interoception,
    partner: (s) => !s.interoception,
  });
}

/** The report's section of `tests` (none without tests). */
export function interoceptionSection(tests: readonly RunPairTest[]): string[] {
  if (tests.length === 0) return [];
  return [
    '## Interoception against NGC, paired',
    '',
    'Each run trained and evaluated with `<eviction_rate>p%</eviction_rate>` in its prompts against the run trained with the same settings without it, on the same problems: exact McNemar test, Holm-adjusted over the tagged runs of a rate; ▲ / ▼ where the tagged run is better / worse at α = 0.05. A rate is beyond training where it exceeds the last stage of the curriculum (paper, Fig. 6: the tagged model matches or exceeds NGC within the training rates, and is 8–13 points ahead at the budgets beyond them).',
    '',
    '| ε | tagged run | accuracy | mean peak | run | accuracy | mean peak | only tagged | only untagged | Holm p | in training |',
    '|--:|---|--:|--:|---|--:|--:|--:|--:|--:|---|',
    ...tests.map((t) => {
      const lastRate = 1 - (t.settings.retention.at(-1) ?? 1);
      const inTraining = t.rate <= lastRate + 1e-9 ? 'yes' : 'beyond';
      return `| ${t.rate} | ${t.run} | ${percent(t.accuracy)}${pairMark(t)} | ${t.meanPeak.toFixed(1)} | ${t.partner} | ${percent(t.partnerAccuracy)} | ${t.partnerMeanPeak.toFixed(1)} | ${t.onlyRun} | ${t.onlyPartner} | ${formatP(t.adjustedP)} | ${inTraining} |`;
    }),
    '',
  ];
}
