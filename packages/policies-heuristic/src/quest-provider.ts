import { LetheError } from '@lethe/core';
import { isReadBudget, type PolicyProvider } from '@lethe/kv-cache';
import * as v from 'valibot';
import { QuestSelector } from './quest';

const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** The options schema of {@link questProvider}: {@link QuestSelector}'s options but the budget. */
const QUEST_OPTIONS = v.strictObject({
  pageSize: v.pipe(
    v.optional(positiveInteger, 16),
    v.description('live entries per page (the cache takes this page size)'),
  ),
  minPages: v.pipe(
    v.optional(positiveInteger, 3),
    v.description(
      'fewest pages a KV head reads per step: Quest reads max(minPages, floor(readTokens / pageSize)) pages, the newest included',
    ),
  ),
  denseLayers: v.pipe(
    v.optional(count, 2),
    v.description(
      'leading layers that always read densely (Quest skips the first two); a model with no more layers reads everything',
    ),
  ),
  groupReduce: v.pipe(
    v.optional(v.picklist(['max', 'sum']), 'max'),
    v.description(
      "GQA: a page's score over its KV head's query heads, the highest of their bounds (max, still an upper bound) or their sum",
    ),
  ),
});

const provider: PolicyProvider<typeof QUEST_OPTIONS> = {
  name: 'quest',
  summary:
    'evicts nothing: each decode step reads only the pages of each KV head whose keys can score highest for its query (Quest; read budgets)',
  options: QUEST_OPTIONS,
  budgetForms: ['read'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a budget other than a read budget. */
  build({ budget, options }) {
    if (!isReadBudget(budget)) {
      throw new LetheError('E_BUDGET', '"quest" takes read budgets ({ readTokens })', 'budget');
    }
    return { readSelector: new QuestSelector({ tokenBudget: budget.readTokens, ...options }) };
  },
};

/**
 * The Quest provider: a read selector (`QuestSelector`) that evicts nothing and, per decode step,
 * reads only the best pages of each KV head by Quest's bound on `q·k`. It takes read budgets
 * only (`budgetForms: ['read']`): `{ readTokens }` is Quest's `token_budget`, the entries each
 * KV head reads per step (`max(minPages, floor(readTokens / pageSize))` pages). The cache keeps
 * every entry, so a capacity or rate schedule (memory bounds) or compute targets mean nothing to
 * it and are refused with `E_BUDGET`.
 */
export const questProvider: PolicyProvider<typeof QUEST_OPTIONS> = Object.freeze(provider);
