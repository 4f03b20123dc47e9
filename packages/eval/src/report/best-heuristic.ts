import { LetheError } from '@lethe/core';
import { FULL_CACHE } from '@lethe/kv-cache';
import type { CellResult, SweepResults } from '../harness/results';
import { holmAdjust } from '../metrics/holm';
import { pairedAccuracy } from '../metrics/paired-accuracy';
import { type PairedBootstrapOptions, pairedBootstrap } from '../metrics/paired-bootstrap';

/** Options of {@link compareToBestHeuristic}. */
export interface BestHeuristicOptions {
  /**
   * Labels of the policies that are heuristics (no training), in the order that breaks ties
   * between equally good ones — e.g. the untrained providers of the registry.
   */
  readonly heuristics: readonly string[];
  /**
   * Labels of the policies to compare (default: every one but the full cache) — e.g.
   * `leaderboardRoles(config, registry).compared`, which leaves out policies whose budget is in
   * another unit.
   */
  readonly compared?: readonly string[];
  /** Family-wise error rate of each (task, budget)'s comparisons (default 0.05). */
  readonly alpha?: number;
  /** The paired bootstrap's options (perplexity, or several samples per example). */
  readonly bootstrap?: PairedBootstrapOptions;
}

/** How a policy did against the best heuristic at one task and budget, on the same examples. */
export interface BaselineComparison {
  readonly task: string;
  readonly budget: number;
  readonly policy: string;
  /** The best heuristic at this task and budget (the highest accuracy, lowest perplexity). */
  readonly baseline: string;
  /** `accuracy` (higher is better) or `perplexity` (lower is better). */
  readonly metric: 'accuracy' | 'perplexity';
  /** Paired units: examples (documents) of the seeds both policies ran. */
  readonly n: number;
  /** The policy's and the baseline's score over those units. */
  readonly score: number;
  readonly baselineScore: number;
  /**
   * `mcnemar` (exact, one sample per example) or `bootstrap` (paired, of per-document perplexity
   * or of per-example accuracy over several samples).
   */
  readonly test: 'mcnemar' | 'bootstrap';
  readonly pValue: number;
  /** Holm-adjusted over every policy compared at this task and budget. */
  readonly adjustedP: number;
  /** `better` or `worse` where `adjustedP ≤ alpha`, else `indistinguishable`. */
  readonly verdict: 'better' | 'worse' | 'indistinguishable';
}

/**
 * Compares every policy of a sweep with the best heuristic at the same task and budget on the same
 * examples — the leaderboard's question: does it beat what needs no training, where statistics
 * can tell? Per (task, budget): the baseline is the heuristic of `options.heuristics` with the
 * best score over the seeds it ran; every other policy (the full cache aside) is paired with it
 * example by example over the seeds both ran — an exact McNemar test on correctness with one
 * sample per example, otherwise a paired bootstrap of per-example accuracy (several samples) or
 * per-document perplexity — and the p-values of that task and budget are Holm-adjusted together,
 * so the chance of any false `better` or `worse` there stays at most `alpha`.
 *
 * Cells without per-example outcomes (`sequences`, `documents`; files written before them) are
 * left out. A (task, budget) with no heuristic gives no comparison.
 *
 * @throws LetheError `E_ARG` naming `options.heuristics` or `options.compared` (not an array of
 *   strings) or `options.alpha` (not in (0, 1)).
 */
export function compareToBestHeuristic(
  results: SweepResults,
  options: BestHeuristicOptions,
): BaselineComparison[] {
  const { heuristics } = options;
  if (!Array.isArray(heuristics) || heuristics.some((h) => typeof h !== 'string')) {
    throw new LetheError('E_ARG', 'must be an array of policy labels', 'options.heuristics');
  }
  const { compared } = options;
  if (
    compared !== undefined &&
    (!Array.isArray(compared) || compared.some((c) => typeof c !== 'string'))
  ) {
    throw new LetheError('E_ARG', 'must be an array of policy labels', 'options.compared');
  }
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1), got ${alpha}`, 'options.alpha');
  }
  const samples = Number((results.config as { samplesPerExample?: number }).samplesPerExample ?? 1);
  const groups = new Map<string, Map<string, CellResult[]>>();
  for (const cell of results.cells) {
    if (cell.key.policy === FULL_CACHE || unitsOf(cell, samples) === undefined) continue;
    const included =
      options.compared === undefined ||
      options.compared.includes(cell.key.policy) ||
      heuristics.includes(cell.key.policy);
    if (!included) continue;
    const id = JSON.stringify([cell.key.task, cell.key.budget]);
    const byPolicy = groups.get(id) ?? new Map<string, CellResult[]>();
    groups.set(id, byPolicy);
    const cells = byPolicy.get(cell.key.policy);
    if (cells === undefined) byPolicy.set(cell.key.policy, [cell]);
    else cells.push(cell);
  }
  const out: BaselineComparison[] = [];
  for (const [id, byPolicy] of groups) {
    const [task, budget] = JSON.parse(id) as [string, number];
    const comparisons = compareGroup(task, budget, byPolicy, samples, options);
    const adjusted = holmAdjust(comparisons.map((c) => c.pValue));
    comparisons.forEach((c, i) => {
      const adjustedP = adjusted[i]!;
      const better =
        c.metric === 'accuracy' ? c.score > c.baselineScore : c.score < c.baselineScore;
      const verdict = adjustedP > alpha ? 'indistinguishable' : better ? 'better' : 'worse';
      out.push({ ...c, adjustedP, verdict });
    });
  }
  return out;
}

type Unadjusted = Omit<BaselineComparison, 'adjustedP' | 'verdict'>;

/** The comparisons of one task and budget, before the adjustment. */
function compareGroup(
  task: string,
  budget: number,
  byPolicy: Map<string, CellResult[]>,
  samples: number,
  options: BestHeuristicOptions,
): Unadjusted[] {
  const metric = byPolicy.values().next().value![0]!.documents ? 'perplexity' : 'accuracy';
  const higherIsBetter = metric === 'accuracy';
  let baseline: string | undefined;
  let baselineScore = 0;
  for (const label of options.heuristics) {
    const cells = byPolicy.get(label);
    if (cells === undefined) continue;
    const score = mean(cells.flatMap((cell) => unitsOf(cell, samples)!));
    if (
      baseline === undefined ||
      (higherIsBetter ? score > baselineScore : score < baselineScore)
    ) {
      baseline = label;
      baselineScore = score;
    }
  }
  if (baseline === undefined) return [];
  const reference = new Map(byPolicy.get(baseline)!.map((cell) => [cell.key.seed, cell]));
  const compared: Unadjusted[] = [];
  for (const [policy, cells] of byPolicy) {
    if (policy === baseline) continue;
    const mine: number[] = [];
    const theirs: number[] = [];
    for (const cell of [...cells].sort((a, b) => a.key.seed - b.key.seed)) {
      const other = reference.get(cell.key.seed);
      if (other === undefined) continue;
      mine.push(...unitsOf(cell, samples)!);
      theirs.push(...unitsOf(other, samples)!);
    }
    if (mine.length === 0) continue;
    const exact = metric === 'accuracy' && samples === 1;
    const pValue = exact
      ? pairedAccuracy(
          mine.map((x) => x === 1),
          theirs.map((x) => x === 1),
        ).pValue
      : pairedBootstrap(mine, theirs, options.bootstrap).pValue;
    compared.push({
      task,
      budget,
      policy,
      baseline,
      metric,
      n: mine.length,
      score: mean(mine),
      baselineScore: mean(theirs),
      test: exact ? 'mcnemar' : 'bootstrap',
      pValue,
    });
  }
  return compared;
}

/**
 * A cell's paired units, in example order: per-document perplexity, or per-example accuracy (1
 * or 0 with one sample, the share of its samples solved with several); undefined without them.
 */
function unitsOf(cell: CellResult, samples: number): number[] | undefined {
  if (cell.documents !== undefined) {
    return cell.documents.map((d) => Math.exp(d.sumNll / d.predicted));
  }
  if (cell.sequences === undefined) return undefined;
  const units: number[] = [];
  cell.sequences.forEach((sequence, s) => {
    const example = Math.floor(s / samples);
    units[example] = (units[example] ?? 0) + (sequence.correct ? 1 / samples : 0);
  });
  return units;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, x) => sum + x, 0) / values.length;
}
