import { LetheError } from '@lethe/core';
import type {
  BudgetForm,
  CapacityBudget,
  ComputeBudget,
  ComputeTargets,
  PolicyBudget,
  RateBudget,
  ReadBudget,
} from './provider';

/** Whether `budget` is a rate schedule. */
export function isRateBudget(budget: PolicyBudget): budget is RateBudget {
  return 'keepRatio' in budget;
}

/** Whether `budget` is a compute budget (per-axis targets). */
export function isComputeBudget(budget: PolicyBudget): budget is ComputeBudget {
  return 'targets' in budget;
}

/** Whether `budget` is a read budget (entries each KV head reads per decode step). */
export function isReadBudget(budget: PolicyBudget): budget is ReadBudget {
  return 'readTokens' in budget;
}

/** The form of a budget: `compute`, `read`, `rate` or `capacity`. */
export function budgetForm(budget: PolicyBudget): BudgetForm {
  if (isComputeBudget(budget)) return 'compute';
  if (isReadBudget(budget)) return 'read';
  return isRateBudget(budget) ? 'rate' : 'capacity';
}

const TARGET_AXES = ['tokenKeep', 'mlpInputKeep', 'precision'] as const;

/**
 * Checks compute targets: an object of `tokenKeep`, `mlpInputKeep` and `precision`, each a
 * number in [0, 1], and nothing else.
 *
 * @throws LetheError `E_BUDGET` naming `argument` (not an object, an unknown key) or
 *   `<argument>.<axis>`.
 */
export function validateComputeTargets(
  targets: ComputeTargets,
  argument = 'budget.targets',
): ComputeTargets {
  if (typeof targets !== 'object' || targets === null || Array.isArray(targets)) {
    throw new LetheError('E_BUDGET', 'must be { tokenKeep, mlpInputKeep, precision }', argument);
  }
  const unknown = Object.keys(targets).find(
    (key) => !(TARGET_AXES as readonly string[]).includes(key),
  );
  if (unknown !== undefined) {
    throw new LetheError(
      'E_BUDGET',
      `has an unknown key "${unknown}"; valid keys: ${TARGET_AXES.join(', ')}`,
      argument,
    );
  }
  for (const axis of TARGET_AXES) {
    const value = targets[axis];
    if (!(typeof value === 'number' && value >= 0 && value <= 1)) {
      throw new LetheError(
        'E_BUDGET',
        `must be a number in [0, 1], got ${typeof value === 'number' ? value : JSON.stringify(value)}`,
        `${argument}.${axis}`,
      );
    }
  }
  const { tokenKeep, mlpInputKeep, precision } = targets;
  return { tokenKeep, mlpInputKeep, precision };
}

/**
 * Checks a {@link PolicyBudget} and returns a plain copy of it: exactly one of `capacity` (an
 * integer ≥ 2), `keepRatio` (in (0, 1]) with `every` (a positive integer), `targets` (see
 * {@link validateComputeTargets}), or `readTokens` (a positive integer).
 *
 * @throws LetheError `E_BUDGET` naming `budget`, `budget.capacity`, `budget.keepRatio`,
 *   `budget.every`, `budget.targets[.<axis>]` or `budget.readTokens`.
 */
export function validatePolicyBudget(budget: PolicyBudget): PolicyBudget {
  if (typeof budget !== 'object' || budget === null) {
    throw new LetheError(
      'E_BUDGET',
      'must be { capacity }, { keepRatio, every }, { targets } or { readTokens }',
      'budget',
    );
  }
  const hasRate = 'keepRatio' in budget || 'every' in budget;
  const forms = [hasRate, 'capacity' in budget, 'targets' in budget, 'readTokens' in budget].filter(
    Boolean,
  ).length;
  if (forms !== 1) {
    throw new LetheError(
      'E_BUDGET',
      'must have exactly one of capacity (a ceiling), keepRatio and every (a rate schedule), targets (compute targets), or readTokens (a read budget)',
      'budget',
    );
  }
  if ('targets' in budget) return { targets: validateComputeTargets(budget.targets) };
  if ('readTokens' in budget) {
    const { readTokens } = budget;
    if (!(Number.isInteger(readTokens) && readTokens >= 1)) {
      throw new LetheError(
        'E_BUDGET',
        `must be a positive integer (entries each KV head reads per decode step), got ${typeof readTokens === 'number' ? readTokens : JSON.stringify(readTokens)}`,
        'budget.readTokens',
      );
    }
    return { readTokens };
  }
  if (!hasRate) {
    const { capacity } = budget as CapacityBudget;
    if (!(Number.isInteger(capacity) && capacity >= 2)) {
      throw new LetheError(
        'E_BUDGET',
        `must be an integer ≥ 2 (one kept entry plus the newest token), got ${capacity}`,
        'budget.capacity',
      );
    }
    return { capacity };
  }
  const { keepRatio, every } = budget as RateBudget;
  if (!(typeof keepRatio === 'number' && keepRatio > 0 && keepRatio <= 1)) {
    throw new LetheError('E_BUDGET', `must be in (0, 1], got ${keepRatio}`, 'budget.keepRatio');
  }
  if (!(Number.isInteger(every) && every >= 1)) {
    throw new LetheError('E_BUDGET', `must be a positive integer, got ${every}`, 'budget.every');
  }
  return { keepRatio, every };
}

/**
 * The capacity budget of a provider that supports only ceilings.
 *
 * @param provider The provider's name, for the message.
 * @throws LetheError `E_BUDGET` naming `budget` for a rate schedule, compute targets or a read
 *   budget.
 */
export function requireCapacityBudget(budget: PolicyBudget, provider: string): CapacityBudget {
  if (isComputeBudget(budget)) {
    throw new LetheError(
      'E_BUDGET',
      `"${provider}" supports capacity budgets only, not compute targets`,
      'budget',
    );
  }
  if (isReadBudget(budget)) {
    throw new LetheError(
      'E_BUDGET',
      `"${provider}" supports capacity budgets only, not a read budget (readTokens ${budget.readTokens})`,
      'budget',
    );
  }
  if (isRateBudget(budget)) {
    throw new LetheError(
      'E_BUDGET',
      `"${provider}" supports capacity budgets only, not a rate schedule (keepRatio ${budget.keepRatio} every ${budget.every} tokens)`,
      'budget',
    );
  }
  return budget;
}
