import { assertFiniteInRange, assertInteger, assertRecord, LetheError } from '@lethe/core';
import type { Anchors } from '../geometry';
import { roomyKeep } from '../policy/budget-ceiling';
import type { EvictionPolicy, KeepDecision, TriggerContext } from '../policy/eviction-policy';
import type { LayerObservation, ObservationNeeds } from '../policy/observation';
import type { RandomSource } from '../policy/random-source';
import { NO_ANCHORS, validateAnchors } from './anchors';
import { type BlockAggregation, selectTopBlocks } from './blocks';
import { type Budget, budgetKeepCount, validateBudget } from './budget';
import { decideKeep, type Granularity, validateGranularity } from './granularity';
import { selectAboveThreshold } from './threshold';
import { selectTopK } from './top-k';
import { shouldTrigger, type Trigger, validateTrigger } from './trigger';

/** Options shared by every score-based eviction policy. */
export interface ScorerPolicyOptions {
  /** Entries kept per round, per KV head (or per layer at layer granularity). */
  readonly budget: Budget;
  /**
   * When rounds run. Default for a `{ keepCount: K }` budget: `{ whenLiveExceeds: K }` (evict as
   * soon as a head exceeds K). A `{ keepRatio }` budget has no natural default and needs one.
   */
  readonly trigger?: Trigger;
  /** Entries never evicted. Default `{ sinks: 0, window: 0 }`. */
  readonly anchors?: Anchors;
  /** Per-head keep sets or one per layer (heads averaged). Default `'head'`. */
  readonly granularity?: Granularity;
  /** When set, keep whole blocks of this many consecutive live entries instead of single entries. */
  readonly blockSize?: number;
  /** How entry scores combine into a block score when `blockSize` is set. Default `'mean'`. */
  readonly blockAggregation?: BlockAggregation;
  /**
   * Threshold selection instead of budgeted top-k: a round keeps the entries (or blocks) scoring
   * ≥ `threshold`, the anchors and the newest entry, capped at the budget's keep count (best
   * scores first). Default: undefined (top-k).
   */
  readonly threshold?: number;
}

/** The trigger used when none is given: a live-count trigger at the budget's keep count. */
function defaultTrigger(budget: Budget): Trigger {
  if ('keepCount' in budget) return { whenLiveExceeds: budget.keepCount };
  throw new LetheError('E_ARG', 'a keepRatio budget needs an explicit trigger', 'trigger');
}

/**
 * Base class of score-based eviction policies, in the style of NVIDIA kvpress's `ScorerPress`:
 * a subclass declares its `name` and `needs` and implements {@link ScorerPolicy.score}; this
 * class does the rest — the trigger, the budget, anchors, block grouping and head/layer
 * granularity — with the shared selection functions. A round keeps, per head,
 * `budgetKeepCount(budget, live)` entries: the anchors plus the highest scores (ties to the older
 * entry).
 *
 * @example
 * ```ts
 * class NewestFirst extends ScorerPolicy {
 *   readonly name = 'newest-first';
 *   readonly needs = NO_NEEDS;
 *   score(obs: LayerObservation): Float32Array {
 *     return Float32Array.from(obs.positions);
 *   }
 * }
 * const policy = new NewestFirst({ budget: { keepCount: 64 }, anchors: { sinks: 4, window: 0 } });
 * ```
 */
export abstract class ScorerPolicy implements EvictionPolicy {
  /** Human-readable method name. */
  abstract readonly name: string;
  /** Observation fields {@link ScorerPolicy.score} reads. */
  abstract readonly needs: ObservationNeeds;
  /** Entries kept per round. */
  readonly budget: Budget;
  /** When rounds run. */
  readonly trigger: Trigger;
  /** Entries never evicted. */
  readonly anchors: Anchors;
  /** Per-head or per-layer keep sets. */
  readonly granularity: Granularity;
  /** Block size for block-granular keeping, or undefined for single entries. */
  readonly blockSize: number | undefined;
  /** Block score aggregation. */
  readonly blockAggregation: BlockAggregation;
  /** Threshold of threshold selection, or undefined for top-k. */
  readonly threshold: number | undefined;

  /**
   * @throws LetheError `E_BUDGET` for a bad budget, or naming `anchors` when a `{ keepCount }`
   *   budget cannot hold the anchored entries (see {@link anchoredEntryBound}); `E_ARG` for any
   *   other bad option.
   */
  constructor(options: ScorerPolicyOptions) {
    assertRecord(options, 'options');
    this.budget = validateBudget(options.budget);
    this.trigger = validateTrigger(options.trigger ?? defaultTrigger(options.budget));
    this.anchors = validateAnchors(options.anchors ?? NO_ANCHORS);
    this.granularity = validateGranularity(options.granularity ?? 'head');
    this.blockSize =
      options.blockSize === undefined
        ? undefined
        : assertInteger(options.blockSize, 'blockSize', 1);
    this.blockAggregation = options.blockAggregation ?? 'mean';
    if (!['mean', 'max', 'sum'].includes(this.blockAggregation)) {
      throw new LetheError(
        'E_ARG',
        `unknown aggregation "${this.blockAggregation}"`,
        'blockAggregation',
      );
    }
    this.threshold =
      options.threshold === undefined
        ? undefined
        : assertFiniteInRange(options.threshold, 'threshold');
    checkAnchorsFit(this.budget, this.anchors, this.blockSize);
  }

  /**
   * Importance of every live entry of the observed layer, `[kvHeads, maxLive]` (padding ignored);
   * higher is more important. Must not return NaN for a live entry.
   */
  abstract score(observation: LayerObservation, rng: RandomSource): Float32Array;

  /** Whether the trigger fires for this layer now. */
  shouldEvict(context: TriggerContext): boolean {
    return shouldTrigger(this.trigger, context);
  }

  /**
   * Scores the layer and keeps, per head (or for the layer), the anchors plus the best entries
   * (or blocks) up to the budget.
   *
   * @throws LetheError `E_ARG` when `score` returns NaN for a live entry, `E_SHAPE` for a score
   * array of the wrong length, `E_STATE` at layer granularity when heads hold different entries.
   */
  select(observation: LayerObservation, rng: RandomSource): KeepDecision {
    const scores = this.score(observation, rng);
    const { blockSize } = this;
    const { anchors, threshold } = this;
    const least = anchoredEntryBound(this.anchors, blockSize) + 1;
    return decideKeep(scores, observation, this.granularity, (row, positions) => {
      const kept = budgetKeepCount(this.budget, row.length);
      // under a keep count, room for the tokens that come before the next round
      const k =
        'keepCount' in this.budget
          ? Math.min(kept, roomyKeep(this.budget.keepCount, observation.incoming, least))
          : kept;
      if (blockSize !== undefined) {
        return selectTopBlocks(
          row,
          positions,
          anchors,
          k,
          blockSize,
          this.blockAggregation,
          threshold,
        );
      }
      return threshold === undefined
        ? selectTopK(row, positions, anchors, k)
        : selectAboveThreshold(row, positions, anchors, threshold, k);
    });
  }
}

/**
 * The most live entries of one KV head the anchors can force a round to keep: `sinks + window`
 * entries, or with blocks of `blockSize` the blocks they touch — the sinks' ⌈sinks / b⌉ blocks
 * and up to ⌈window / b⌉ + 1 blocks holding the window (it need not start on a block boundary).
 */
export function anchoredEntryBound(anchors: Anchors, blockSize?: number): number {
  if (blockSize === undefined) return anchors.sinks + anchors.window;
  const windowBlocks = anchors.window > 0 ? Math.ceil(anchors.window / blockSize) + 1 : 0;
  return (Math.ceil(anchors.sinks / blockSize) + windowBlocks) * blockSize;
}

/**
 * Refuses anchors that a `{ keepCount }` budget cannot hold, so a policy never silently keeps more
 * than its keep count. A `{ keepRatio }` budget is relative and is not checked.
 *
 * @param argument The option to name (default `anchors`; SnapKV names its `windowSize`).
 * @throws LetheError `E_BUDGET` naming `argument`, with the fields and the keep count.
 */
export function checkAnchorsFit(
  budget: Budget,
  anchors: Anchors,
  blockSize?: number,
  argument = 'anchors',
): void {
  if (!('keepCount' in budget)) return;
  const bound = anchoredEntryBound(anchors, blockSize);
  if (bound > budget.keepCount) {
    const blocks = blockSize === undefined ? '' : ` in blocks of ${blockSize}`;
    throw new LetheError(
      'E_BUDGET',
      `sinks ${anchors.sinks} + window ${anchors.window}${blocks} can force ${bound} entries per KV head, more than budget.keepCount ${budget.keepCount}; lower them or raise the budget`,
      argument,
    );
  }
}
