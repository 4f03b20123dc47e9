import type { EvalCell } from './eval-cells';
import { percent } from './percent';
import type { RunHistory } from './report-content';
import { settingsKey } from './settings-key';

/** The runs of one recipe trained from different seeds, and their accuracy at one rate. */
export interface SeedSpread {
  readonly rate: number;
  /** The runs' labels and seeds, in seed order. */
  readonly labels: readonly string[];
  readonly seeds: readonly number[];
  /** Each run's greedy accuracy, in seed order; their mean, lowest and highest. */
  readonly accuracies: readonly number[];
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/**
 * How much a recipe's result owes to its seed: the NGC-family runs of `runs` (not `no-evict`)
 * whose settings agree on everything but the seed, two or more of them, and at every rate each of
 * them was evaluated at (greedy NGC cells of `cells`), the accuracy of each seed with its mean and
 * range.
 */
export function seedSpreads(runs: readonly RunHistory[], cells: readonly EvalCell[]): SeedSpread[] {
  const recipes = new Map<string, RunHistory[]>();
  for (const run of runs) {
    if (run.settings.variant === 'no-evict') continue;
    const key = settingsKey(run.settings, ['seed']);
    recipes.set(key, [...(recipes.get(key) ?? []), run]);
  }
  const rates = [...new Set(cells.filter((c) => c.rate > 0).map((c) => c.rate))].sort();
  const spreads: SeedSpread[] = [];
  for (const members of recipes.values()) {
    const seeded = [...members].sort((a, b) => a.settings.seed - b.settings.seed);
    for (const rate of rates) {
      const evaluated = seeded.flatMap((run) => {
        const cell = cells.find(
          (c) => c.model === run.label && c.method === 'ngc' && c.rate === rate,
        );
        return cell === undefined ? [] : [{ run, cell }];
      });
      if (evaluated.length < 2) continue;
      const accuracies = evaluated.map(
        ({ cell }) => cell.outcomes.filter((o) => o.correct).length / cell.outcomes.length,
      );
      spreads.push({
        rate,
        labels: evaluated.map(({ run }) => run.label),
        seeds: evaluated.map(({ run }) => run.settings.seed),
        accuracies,
        mean: accuracies.reduce((sum, a) => sum + a, 0) / accuracies.length,
        min: Math.min(...accuracies),
        max: Math.max(...accuracies),
      });
    }
  }
  return spreads;
}

/** The report's section of `spreads` (none without them). */
export function seedSection(spreads: readonly SeedSpread[]): string[] {
  if (spreads.length === 0) return [];
  return [
    '## Across training seeds',
    '',
    'Runs of one recipe (every setting equal but the seed): greedy accuracy per seed, the mean over seeds and its range.',
    '',
    '| runs (seeds) | ε | per seed | mean | range |',
    '|---|--:|---|--:|--:|',
    ...spreads.map(
      (s) =>
        `| ${s.labels.map((label, i) => `${label} (${s.seeds[i]})`).join(', ')} | ${s.rate} | ${s.accuracies.map(percent).join(', ')} | ${percent(s.mean)} | ${percent(s.min)}–${percent(s.max)} |`,
    ),
    '',
  ];
}
