import { LetheError } from '@lethe/core';
import {
  AdaKVPolicy,
  type Anchors,
  entriesAfterRound,
  isRateBudget,
  type PolicyBudget,
  type PolicyProvider,
  requireCapacityBudget,
  type ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import * as v from 'valibot';

const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** Options every score-based heuristic provider accepts (see {@link scorerProvider}). */
export const SCORER_OPTION_ENTRIES = {
  sinks: v.pipe(
    v.optional(count),
    v.description(
      'attention sinks kept (entries at token positions below it); default: the method’s',
    ),
  ),
  window: v.pipe(
    v.optional(count),
    v.description('most recent entries always kept; default: the method’s'),
  ),
  slackFraction: v.pipe(
    v.optional(v.pipe(v.number(), v.minValue(0)), 0),
    v.description(
      'capacity trigger: a round runs when a KV head exceeds capacity + ceil(slackFraction · capacity) entries (0: the budget is exact, a round after every token past it)',
    ),
  ),
  cadence: v.pipe(
    v.optional(positiveInteger),
    v.description(
      'decode-time trigger instead: a round every `cadence` tokens (the cache grows by up to cadence − 1 entries past the capacity between rounds)',
    ),
  ),
  granularity: v.pipe(
    v.optional(v.picklist(['head', 'layer'])),
    v.description(
      'one keep set per KV head, or one per layer (scores averaged); default: the method’s',
    ),
  ),
  blockSize: v.pipe(
    v.optional(positiveInteger),
    v.description('keep whole blocks of this many consecutive entries'),
  ),
  blockAggregation: v.pipe(
    v.optional(v.picklist(['mean', 'max', 'sum']), 'mean'),
    v.description('how entry scores make a block score'),
  ),
  adakv: v.pipe(
    v.optional(v.boolean(), false),
    v.description(
      'AdaKV: share the layer’s budget across its heads by score (per head, per entry)',
    ),
  ),
  threshold: v.pipe(
    v.optional(v.pipe(v.number(), v.finite())),
    v.description('threshold selection: keep entries scoring ≥ threshold (capped at the budget)'),
  ),
} as const;

type SharedEntries = typeof SCORER_OPTION_ENTRIES;

/** The validated shared options of a scorer provider. */
export type SharedScorerOptions = v.InferOutput<v.StrictObjectSchema<SharedEntries, undefined>>;

/**
 * What a round of a scorer provider's policy is sized by: the entries it leaves per KV head under
 * a capacity budget (`capacity − 1`, see `entriesAfterRound`), or under a rate schedule the tokens
 * between rounds (a round keeps a fraction of what is live).
 */
export type RoundShape = { readonly kept: number } | { readonly every: number };

/** What a method adds to {@link scorerProvider}. */
export interface ScorerProviderSpec<E extends v.ObjectEntries> {
  /** Registry name (the policy's `name`). */
  readonly name: string;
  /** One line saying what the method keeps. */
  readonly summary: string;
  /** Method-specific option entries (with their defaults and descriptions). */
  readonly extra: E;
  /**
   * Builds the policy from the shared options, the method's own and the {@link RoundShape} (for
   * defaults sized by the budget); `shared.anchors` is set only when the user gave `sinks` or
   * `window`.
   */
  create(
    shared: ScorerPolicyOptions,
    extra: v.InferOutput<v.StrictObjectSchema<E, undefined>>,
    round: RoundShape,
  ): ScorerPolicy;
}

/** The options schema of a scorer provider with method entries `E`. */
export type ScorerProviderSchema<E extends v.ObjectEntries> = v.StrictObjectSchema<
  SharedEntries & E,
  undefined
>;

/**
 * The anchors a user asked for: `{ sinks, window }` with 0 for the one left out, or undefined when
 * both are left to the method.
 */
export function requestedAnchors(options: SharedScorerOptions): Anchors | undefined {
  if (options.sinks === undefined && options.window === undefined) return undefined;
  return { sinks: options.sinks ?? 0, window: options.window ?? 0 };
}

/**
 * The budget and trigger of a scorer policy, and its {@link RoundShape}. A capacity budget (a
 * ceiling) becomes the selection budget `{ keepCount: capacity − 1 }` per KV head, a round as
 * soon as the ceiling is reached (or `slackFraction` later) or every `cadence` tokens; a rate
 * schedule keeps `⌈keepRatio · live⌉` every `budget.every` tokens, so it takes no trigger
 * options of its own.
 *
 * @throws LetheError `E_BUDGET` naming `options.cadence` or `options.slackFraction` when a rate
 *   schedule is given a trigger too.
 */
function budgetedOptions(
  budget: PolicyBudget,
  shared: SharedScorerOptions,
  provider: string,
): Pick<ScorerPolicyOptions, 'budget' | 'trigger'> & { round: RoundShape } {
  if (isRateBudget(budget)) {
    const conflicting =
      shared.cadence !== undefined ? 'cadence' : shared.slackFraction !== 0 ? 'slackFraction' : '';
    if (conflicting !== '') {
      throw new LetheError(
        'E_BUDGET',
        `a rate schedule triggers its own rounds (every ${budget.every} tokens); leave ${conflicting} out`,
        `options.${conflicting}`,
      );
    }
    return {
      budget: { keepRatio: budget.keepRatio },
      trigger: { every: budget.every },
      round: { every: budget.every },
    };
  }
  const { capacity } = requireCapacityBudget(budget, provider);
  const kept = entriesAfterRound({ capacity });
  return {
    budget: { keepCount: kept },
    trigger:
      shared.cadence === undefined
        ? { whenLiveExceeds: kept, slack: Math.ceil(shared.slackFraction * capacity) }
        : { every: shared.cadence },
    round: { kept },
  };
}

/**
 * A {@link PolicyProvider} for a score-based heuristic: the shared options (anchors, trigger,
 * granularity, blocks, AdaKV, threshold selection) plus the method's own, mapped onto
 * `ScorerPolicyOptions` for a budget ceiling of `capacity` entries per KV head — rounds keep
 * `capacity − 1` entries, triggered as soon as the ceiling is reached (or `slackFraction` later),
 * or every `cadence` tokens — or for a rate schedule (see `budgetedOptions`). A policy whose
 * anchors exceed the capacity
 * is refused with `E_BUDGET` (see `checkAnchorsFit`).
 */
export function scorerProvider<E extends v.ObjectEntries>(
  spec: ScorerProviderSpec<E>,
): PolicyProvider<ScorerProviderSchema<E>> {
  const options = v.strictObject({ ...SCORER_OPTION_ENTRIES, ...spec.extra });
  const provider: PolicyProvider<ScorerProviderSchema<E>> = {
    name: spec.name,
    summary: spec.summary,
    options,
    build({ budget, options: given }) {
      const shared = given as SharedScorerOptions;
      const { round, ...budgeted } = budgetedOptions(budget, shared, spec.name);
      const anchors = requestedAnchors(shared);
      const policyOptions: ScorerPolicyOptions = {
        ...budgeted,
        ...(anchors === undefined ? {} : { anchors }),
        ...(shared.granularity === undefined ? {} : { granularity: shared.granularity }),
        ...(shared.blockSize === undefined ? {} : { blockSize: shared.blockSize }),
        blockAggregation: shared.blockAggregation,
        ...(shared.threshold === undefined ? {} : { threshold: shared.threshold }),
      };
      // The validated options hold the method's own (and the shared ones, which it ignores).
      const extra = given as v.InferOutput<v.StrictObjectSchema<E, undefined>>;
      const scorer = spec.create(policyOptions, extra, round);
      return { eviction: shared.adakv ? new AdaKVPolicy(scorer) : scorer };
    },
  };
  return Object.freeze(provider);
}
