import { holmAdjust, pairedAccuracy } from '@lethe/eval';
import type { EvalCell } from './eval-cells';
import type { RunHistory } from './report-content';
import { settingsKey } from './settings-key';
import { meanPeak } from './summarize';
import type { TrainSettings } from './train-settings';

/** A run against its partner — the run it differs from by one choice alone — at one rate. */
export interface RunPairTest {
  readonly rate: number;
  /** Labels of the tested run and of its partner. */
  readonly run: string;
  readonly partner: string;
  /** The tested run's settings (what it chose). */
  readonly settings: TrainSettings;
  readonly accuracy: number;
  readonly partnerAccuracy: number;
  /** Mean over problems of the most KV entries held at once (eq. 7's peak). */
  readonly meanPeak: number;
  readonly partnerMeanPeak: number;
  /** Problems only the run solved, and only its partner. */
  readonly onlyRun: number;
  readonly onlyPartner: number;
  /** Exact McNemar p-value, and Holm-adjusted over the pairs tested at this rate. */
  readonly pValue: number;
  readonly adjustedP: number;
}

/** Which runs a comparison tests, which it pairs them with, and the settings they may differ in. */
export interface RunPairing {
  /** The settings that make the choice: a pair agrees on every other one. */
  readonly choice: readonly (keyof TrainSettings)[];
  /** Whether a run is one of those tested (`token-only`, say). */
  readonly tested: (settings: TrainSettings) => boolean;
  /** Whether a run can be a tested run's partner (`ngc`, say). */
  readonly partner: (settings: TrainSettings) => boolean;
}

/**
 * Every run of `runs` that `pairing` tests against the partner run whose settings equal its own
 * but for `pairing.choice`, at every rate both were evaluated at (greedy NGC cells of `cells`), on
 * the same problems: an exact McNemar test, the p-values of one rate Holm-adjusted together (the
 * leaderboard's rule for the policies of a budget). Runs without a partner are left out.
 */
export function runPairTests(
  runs: readonly RunHistory[],
  cells: readonly EvalCell[],
  pairing: RunPairing,
): RunPairTest[] {
  const key = (settings: TrainSettings): string => settingsKey(settings, pairing.choice);
  const partners = new Map(
    runs.filter((r) => pairing.partner(r.settings)).map((r) => [key(r.settings), r.label]),
  );
  const cellOf = (model: string, rate: number): EvalCell | undefined =>
    cells.find((c) => c.model === model && c.method === 'ngc' && c.rate === rate);
  const rates = [...new Set(cells.filter((c) => c.rate > 0).map((c) => c.rate))].sort();
  const tests: RunPairTest[] = [];
  for (const rate of rates) {
    const atRate: Omit<RunPairTest, 'adjustedP'>[] = [];
    for (const run of runs) {
      if (!pairing.tested(run.settings)) continue;
      const partner = partners.get(key(run.settings));
      const mine = cellOf(run.label, rate);
      const theirs = partner === undefined ? undefined : cellOf(partner, rate);
      if (partner === undefined || mine === undefined || theirs === undefined) continue;
      const paired = pairedAccuracy(
        mine.outcomes.map((o) => o.correct),
        theirs.outcomes.map((o) => o.correct),
      );
      atRate.push({
        rate,
        run: run.label,
        partner,
        settings: run.settings,
        accuracy: paired.accuracyA,
        partnerAccuracy: paired.accuracyB,
        meanPeak: meanPeak(mine.outcomes),
        partnerMeanPeak: meanPeak(theirs.outcomes),
        onlyRun: paired.onlyA,
        onlyPartner: paired.onlyB,
        pValue: paired.pValue,
      });
    }
    const adjusted = holmAdjust(atRate.map((t) => t.pValue));
    atRate.forEach((t, i) => tests.push({ ...t, adjustedP: adjusted[i]! }));
  }
  return tests;
}

/** ▲ / ▼ where the tested run is better / worse than its partner at α = 0.05 (Holm-adjusted). */
export function pairMark(test: RunPairTest): string {
  if (test.adjustedP > 0.05) return '';
  return test.accuracy > test.partnerAccuracy ? ' ▲' : ' ▼';
}

/** A p-value as the leaderboard's report writes it: 2 decimals, in exponent form below 0.01. */
export function formatP(p: number): string {
  return p >= 0.01 ? p.toFixed(2) : p.toExponential(1);
}
