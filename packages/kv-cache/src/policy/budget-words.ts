import type { PolicyBudget } from './provider';

/**
 * What `budget` allows, in words: `64 entries per KV head`, `reads 32 entries per KV head and
 * step`, `compute targets tokenKeep 0.5, mlpInputKeep 0.5, precision 0.5` or `keeps 0.5 every 16
 * tokens` — how `lethe generate` and the browser example say what a policy was built for.
 *
 * @example
 * ```ts
 * describeBudget({ capacity: 64 }); // '64 entries per KV head'
 * ```
 */
export function describeBudget(budget: PolicyBudget): string {
  if ('capacity' in budget) return `${budget.capacity} entries per KV head`;
  if ('readTokens' in budget) return `reads ${budget.readTokens} entries per KV head and step`;
  if ('targets' in budget) {
    const t = budget.targets;
    return `compute targets tokenKeep ${t.tokenKeep}, mlpInputKeep ${t.mlpInputKeep}, precision ${t.precision}`;
  }
  return `keeps ${budget.keepRatio} every ${budget.every} tokens`;
}
