import { LetheError } from '@lethe/core';
import { FULL_CACHE } from '@lethe/kv-cache';
import { requireObject } from './arguments';
import { validateBudgetFraction } from './budget';
import { runsAtBudget, runsOnTask } from './policy-spec';
import type { CellKey } from './results';
import {
  budgetsOf,
  type SweepConfig,
  seedsOf,
  taskLabel,
  validateSweepConfig,
} from './sweep-config';

/**
 * The cells of a sweep in their deterministic order: tasks (config order, keyed by label), then seeds, then
 * policies (by label; a policy restricted to some tasks only on those), then budgets. The full
 * cache contributes one cell per (task, seed), at budget 1, wherever it stands in `policies`;
 * every other policy one cell per budget of the task (those of its own `budgets` only, if given). Seeds sit outside policies so
 * the full-cache reference runs of a (task, seed) serve all its cells in a row.
 *
 * @throws LetheError the errors of `validateSweepConfig` for a config that is not a valid one
 *   (`E_ARG` naming `config` for `null`).
 */
export function sweepCells(config: SweepConfig): CellKey[] {
  const sweep = validateSweepConfig(config);
  const cells: CellKey[] = [];
  for (const label of sweep.tasks.map(taskLabel)) {
    for (const seed of seedsOf(sweep, label)) {
      for (const policy of sweep.policies) {
        if (!runsOnTask(policy, label)) continue;
        const budgets =
          policy.name === FULL_CACHE
            ? [1]
            : budgetsOf(sweep, label).filter((budget) => runsAtBudget(policy, budget));
        for (const budget of budgets) {
          cells.push({ task: label, policy: policy.label, budget, seed });
        }
      }
    }
  }
  return cells;
}

/**
 * A string identifying a cell (equal keys, equal ids).
 *
 * @throws LetheError `E_ARG` naming `key` when it is not an object.
 */
export function cellId(key: CellKey): string {
  requireObject(key, 'key', 'a cell key { task, policy, budget, seed }');
  return JSON.stringify([key.task, key.policy, key.budget, key.seed]);
}

/**
 * Checks a cell key on its own: budget in (0, 1], `full` only at budget 1, seed a non-negative
 * safe integer, names non-empty.
 *
 * @throws LetheError `E_BUDGET` naming `budget` (a missing or `null` budget included), or
 *   `E_ARG` naming the field, or `key` when it is not an object.
 */
export function validateCellKey(key: CellKey): CellKey {
  requireObject(key, 'key', 'a cell key { task, policy, budget, seed }');
  for (const field of ['task', 'policy'] as const) {
    if (typeof key[field] !== 'string' || key[field].length === 0) {
      throw new LetheError('E_ARG', 'must be a non-empty string', field);
    }
  }
  validateBudgetFraction(key.budget, 'budget');
  if (key.policy === FULL_CACHE && key.budget !== 1) {
    throw new LetheError('E_BUDGET', `must be 1 for the full cache, got ${key.budget}`, 'budget');
  }
  if (!(Number.isSafeInteger(key.seed) && key.seed >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${key.seed}`, 'seed');
  }
  return key;
}
