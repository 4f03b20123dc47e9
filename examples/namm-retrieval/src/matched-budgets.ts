import { LetheError } from '@lethe/core';
import type { Aggregate, CellResult, SweepResults } from '@lethe/eval';

/**
 * The baselines NAMM is compared with at its own cache size: the paper's Fig. 5 (H2O and L2),
 * and SnapKV (not in the paper), the strongest heuristic on this project's retrieval tasks.
 */
export const MATCHED_BASELINES = ['h2o', 'l2norm', 'snapkv'] as const;

/** A baseline of {@link MATCHED_BASELINES}. */
export type MatchedBaseline = (typeof MATCHED_BASELINES)[number];

/** What the two sweeps of a matched-budget study evaluate. */
export interface MatchedStudySettings {
  /** The task model directory (its task and options come from `lethe-model.json`). */
  readonly model: string;
  /** The NAMM policy directory. */
  readonly policy: string;
  /** Budget fractions NAMM runs under (1: the threshold alone, as the paper runs it). */
  readonly budgets: readonly number[];
  readonly examples: number;
  readonly seed: number;
  /**
   * Prompt tokens per prefill chunk, evicting between chunks (every policy alike): without
   * chunks every policy's peak is the whole prompt, and sizes could not be matched.
   */
  readonly prefillChunk: number;
}

/** A task as a sweep names it. */
export interface StudyTask {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
}

function sweepOf(
  settings: MatchedStudySettings,
  task: StudyTask,
  policies: readonly unknown[],
  budgets: readonly number[],
): Record<string, unknown> {
  return {
    tasks: [{ name: task.name, options: task.options, prefillChunk: settings.prefillChunk }],
    policies,
    budgets,
    seeds: [settings.seed],
    examplesPerCell: settings.examples,
    checkpoints: { [task.name]: settings.model },
  };
}

/** The first sweep: the full cache, and NAMM under each of `settings.budgets`. */
export function nammSweep(
  settings: MatchedStudySettings,
  task: StudyTask,
): Record<string, unknown> {
  return sweepOf(
    settings,
    task,
    ['full', { name: 'namm', dir: settings.policy }],
    settings.budgets,
  );
}

/**
 * The budget a baseline gets beside NAMM under `budget`: the NAMM cell's realised budget (its
 * mean peak over the full cache's), rounded up to 0.001 so that the baseline never holds less
 * than NAMM did.
 *
 * @throws LetheError `E_STATE` naming `results` when the NAMM cell is missing.
 */
export function matchedBudget(results: SweepResults, budget: number): number {
  const realised = cellOf(results, 'namm', budget).metrics.realisedBudget!.mean;
  return Math.min(1, Math.ceil(realised * 1000 - 1e-9) / 1000);
}

/** The baselines' budgets: {@link matchedBudget} of every NAMM budget, repeats dropped. */
export function matchedBudgets(settings: MatchedStudySettings, results: SweepResults): number[] {
  return [...new Set(settings.budgets.map((budget) => matchedBudget(results, budget)))];
}

/** The second sweep: the baselines at the budgets NAMM realised. */
export function matchedSweep(
  settings: MatchedStudySettings,
  task: StudyTask,
  budgets: readonly number[],
): Record<string, unknown> {
  return sweepOf(settings, task, MATCHED_BASELINES, budgets);
}

/** One policy's outcome in a row of the study. */
export interface MatchedCell {
  readonly accuracy: Aggregate;
  /** Accuracy over the full cache's on the same prompts. */
  readonly normalised: number;
  /** Peak over the full cache's peak, mean over examples. */
  readonly realised: number;
  /** Mean live entries over the full cache's. */
  readonly meanSize: number;
  /** Tokens the model ran on per second (prefill included), over the cell's batches. */
  readonly tokensPerSecond: number;
}

/** NAMM under one budget, and the baselines at its realised budget. */
export interface MatchedRow {
  readonly budget: number;
  readonly matchedBudget: number;
  readonly namm: MatchedCell;
  readonly baselines: Readonly<Record<MatchedBaseline, MatchedCell>>;
}

/** The study's result: the full cache and one row per NAMM budget. */
export interface MatchedStudy {
  readonly full: Aggregate;
  /** The full cache's tokens per second. */
  readonly fullTokensPerSecond: number;
  readonly rows: readonly MatchedRow[];
}

function cellOf(results: SweepResults, policy: string, budget: number): CellResult {
  const cell = results.cells.find((c) => c.key.policy === policy && c.key.budget === budget);
  if (cell === undefined) {
    throw new LetheError('E_STATE', `has no ${policy} cell at budget ${budget}`, 'results');
  }
  return cell;
}

/**
 * Joins the two sweeps into the study's rows.
 *
 * @throws LetheError `E_STATE` naming `results` when a cell is missing.
 */
export function matchedStudy(
  settings: MatchedStudySettings,
  namm: SweepResults,
  matched: SweepResults,
): MatchedStudy {
  const full = cellOf(namm, 'full', 1);
  const fullAccuracy = full.metrics.accuracy!;
  const fullLive = full.metrics.meanLive.mean;
  const outcome = (cell: CellResult): MatchedCell => ({
    accuracy: cell.metrics.accuracy!,
    normalised: cell.metrics.accuracy!.mean / fullAccuracy.mean,
    realised: cell.metrics.realisedBudget!.mean,
    meanSize: cell.metrics.meanLive.mean / fullLive,
    tokensPerSecond: cell.metrics.tokensPerSecond.mean,
  });
  const rows = settings.budgets.map((budget) => {
    const atBudget = matchedBudget(namm, budget);
    return {
      budget,
      matchedBudget: atBudget,
      namm: outcome(cellOf(namm, 'namm', budget)),
      baselines: Object.fromEntries(
        MATCHED_BASELINES.map((name) => [name, outcome(cellOf(matched, name, atBudget))]),
      ) as Record<MatchedBaseline, MatchedCell>,
    };
  });
  return { full: fullAccuracy, fullTokensPerSecond: full.metrics.tokensPerSecond.mean, rows };
}
