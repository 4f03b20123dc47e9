import { assertInteger, LetheError } from '@lethe/tensor';
import type { Anchors } from '../geometry';
import type { EvictionPolicy, KeepDecision, TriggerContext } from '../policy/eviction-policy';
import type { LayerObservation, ObservationNeeds } from '../policy/observation';
import type { RandomSource } from '../policy/random-source';
import { NO_ANCHORS, validateAnchors } from './anchors';
import { type BlockAggregation, selectTopBlocks } from './blocks';
import { type Budget, budgetKeepCount, validateBudget } from './budget';
import { decideKeep, type Granularity, validateGranularity } from './granularity';
import { selectTopK } from './top-k';
import { shouldTrigger, type Trigger, validateTrigger } from './trigger';

/** Options shared by every score-based eviction policy. */
export interface ScorerPolicyOptions {
  /** Entries kept per round, per KV head (or per layer at layer granularity). */
  readonly budget: Budget;
  /**
   * When rounds run. Default for a `{ capacity: C }` budget: `{ whenLiveExceeds: C }` (evict as
   * soon as a head exceeds C). A `{ keepRatio }` budget has no natural default and needs one.
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
}

/** The trigger used when none is given: a capacity trigger at the budget's capacity. */
function defaultTrigger(budget: Budget): Trigger {
  if ('capacity' in budget) return { whenLiveExceeds: budget.capacity };
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
 * const policy = new NewestFirst({ budget: { capacity: 64 }, anchors: { sinks: 4, window: 0 } });
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

  /** @throws LetheError `E_BUDGET` for a bad budget, `E_ARG` for any other bad option. */
  constructor(options: ScorerPolicyOptions) {
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
    return decideKeep(scores, observation, this.granularity, (row, positions) => {
      const k = budgetKeepCount(this.budget, row.length);
      return blockSize === undefined
        ? selectTopK(row, positions, this.anchors, k)
        : selectTopBlocks(row, positions, this.anchors, k, blockSize, this.blockAggregation);
    });
  }
}
