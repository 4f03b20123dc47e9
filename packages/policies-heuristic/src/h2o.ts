import { LetheError } from '@lethe/core';
import {
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import { groupSize, requireField } from './observation-fields';
import { scorerProvider } from './scorer-provider';

/** Which statistic of the attention an entry received H2O ranks by. */
export type H2OStatistic = 'mean' | 'sum';

/** Options of {@link H2OPolicy}. */
export interface H2OOptions extends ScorerPolicyOptions {
  /**
   * `'mean'` (default): attention summed over the queries that saw the entry, divided by their
   * number — kvpress's observed-attention definition, which does not favour old entries just for
   * having been seen more often. `'sum'`: the plain accumulated attention of the H2O paper.
   * Both average over the query heads of the GQA group.
   */
  readonly statistic?: H2OStatistic;
}

/**
 * H2O / observed attention (Zhang et al. 2023): keep the "heavy hitters", the entries that
 * received the most attention so far. Needs the runtime to accumulate attention every step.
 * An entry no query has seen yet (count 0) scores +∞, so it is not evicted unobserved.
 */
export class H2OPolicy extends ScorerPolicy {
  readonly name = 'h2o';
  readonly needs = Object.freeze({ ...NO_NEEDS, accumulatedAttention: true });
  /** Ranking statistic. */
  readonly statistic: H2OStatistic;

  constructor(options: H2OOptions) {
    super(options);
    this.statistic = options.statistic ?? 'mean';
    if (this.statistic !== 'mean' && this.statistic !== 'sum') {
      throw new LetheError(
        'E_ARG',
        `must be "mean" or "sum", got "${this.statistic}"`,
        'statistic',
      );
    }
  }

  /** Mean (or summed) attention each entry received, averaged over its query-head group. */
  score(observation: LayerObservation): Float32Array {
    const size = observation.kvHeads * observation.maxLive;
    const accumulated = requireField(observation, 'accumulatedAttention', size);
    const counts = requireField(observation, 'attentionCounts', size);
    const group = groupSize(observation);
    const scores = new Float32Array(size);
    for (let j = 0; j < size; j++) {
      const seenBy = this.statistic === 'mean' ? counts[j] * group : group;
      scores[j] = counts[j] > 0 ? accumulated[j] / seenBy : Number.POSITIVE_INFINITY;
    }
    return scores;
  }
}

/** The H2O provider. */
export const h2oProvider = scorerProvider({
  name: 'h2o',
  summary: 'heavy hitters: the entries that received the most attention so far (Zhang et al. 2023)',
  extra: {
    statistic: v.pipe(
      v.optional(v.picklist(['mean', 'sum']), 'mean'),
      v.description('mean observed attention (kvpress) or the plain sum (H2O paper)'),
    ),
  },
  create: (shared, extra) => new H2OPolicy({ ...shared, statistic: extra.statistic }),
});
