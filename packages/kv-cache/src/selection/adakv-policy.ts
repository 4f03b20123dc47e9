import { assertFiniteInRange, LetheError } from '@lethe/core';
import type { Anchors } from '../geometry';
import type { EvictionPolicy, KeepDecision, TriggerContext } from '../policy/eviction-policy';
import type { LayerObservation, ObservationNeeds } from '../policy/observation';
import type { RandomSource } from '../policy/random-source';
import { ADAKV_DEFAULT_SAFEGUARD, selectAdaKV } from './adakv';
import { budgetKeepCount } from './budget';
import type { ScorerPolicy } from './scorer-policy';

/** Options of {@link AdaKVPolicy}. */
export interface AdaKVOptions {
  /** Fraction in [0, 1] of its quota each head keeps regardless of the others. Default 0.2. */
  readonly safeguard?: number;
}

/**
 * Wraps a per-head {@link ScorerPolicy} with AdaKV's head-adaptive budget ({@link selectAdaKV}):
 * the wrapped policy's budget gives each head's quota, its scores are compared across all heads
 * of the layer, and its trigger and anchors apply unchanged.
 *
 * @example
 * ```ts
 * const policy = new AdaKVPolicy(new SomeScorer({ budget: { keepCount: 128 } }));
 * ```
 */
export class AdaKVPolicy implements EvictionPolicy {
  /** `adakv(<wrapped name>)`. */
  readonly name: string;
  /** The wrapped policy's needs. */
  readonly needs: ObservationNeeds;
  /** The wrapped policy's anchors. */
  readonly anchors: Anchors;
  /** Safeguard fraction. */
  readonly safeguard: number;

  /**
   * @throws LetheError `E_ARG` for a safeguard outside [0, 1], or a wrapped policy that keeps
   * per layer or per block (AdaKV allocates entries per head).
   */
  constructor(
    readonly scorer: ScorerPolicy,
    options: AdaKVOptions = {},
  ) {
    if (scorer.granularity !== 'head' || scorer.blockSize !== undefined) {
      throw new LetheError('E_ARG', 'AdaKV wraps a per-head, per-entry policy', 'scorer');
    }
    this.safeguard = assertFiniteInRange(
      options.safeguard ?? ADAKV_DEFAULT_SAFEGUARD,
      'safeguard',
      0,
      1,
    );
    this.name = `adakv(${scorer.name})`;
    this.needs = scorer.needs;
    this.anchors = scorer.anchors;
  }

  /** The wrapped policy's trigger. */
  shouldEvict(context: TriggerContext): boolean {
    return this.scorer.shouldEvict(context);
  }

  /** One keep set per head, sized adaptively across the heads of the layer. */
  select(observation: LayerObservation, rng: RandomSource): KeepDecision {
    const scores = this.scorer.score(observation, rng);
    const quotas = observation.liveCounts.map((live) => budgetKeepCount(this.scorer.budget, live));
    return {
      granularity: 'head',
      keep: selectAdaKV(scores, observation, this.anchors, quotas, this.safeguard),
      scores,
    };
  }
}
