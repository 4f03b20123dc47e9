import { assertRecord } from '@lethe/core';
import {
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import { groupSize, requireAttention } from './observation-fields';
import { scorerProvider } from './scorer-provider';

/** Options of {@link TOVAPolicy}: the shared options; granularity defaults to `'layer'`. */
export type TOVAOptions = ScorerPolicyOptions;

/**
 * TOVA (Oren et al. 2024): keep the entries the newest query attends to most, its attention
 * averaged over all heads. `score` returns, per KV head, the last query's attention averaged over
 * that head's query-head group; at the default `'layer'` granularity the shared selection then
 * averages over KV heads, which with equal group sizes is exactly the mean over all query heads,
 * giving one keep set per layer as in the paper. `'head'` granularity gives a per-KV-head variant.
 * Unlike kvpress, the newest entry is not forced in (TOVA does not force it); use
 * `anchors.window` for that.
 */
export class TOVAPolicy extends ScorerPolicy {
  readonly name = 'tova';
  readonly needs = Object.freeze({ ...NO_NEEDS, attentionWindow: 1 });

  constructor(options: TOVAOptions) {
    super({ ...assertRecord(options, 'options'), granularity: options.granularity ?? 'layer' });
  }

  /** Attention of the last observed query, averaged over each KV head's query-head group. */
  score(observation: LayerObservation): Float32Array {
    const attention = requireAttention(observation);
    const { kvHeads, queryHeads, maxLive, liveCounts, window } = observation;
    const group = groupSize(observation);
    const scores = new Float32Array(kvHeads * maxLive);
    const lastRow = (window - 1) * queryHeads * maxLive;
    for (let h = 0; h < kvHeads; h++) {
      for (let i = 0; i < liveCounts[h]; i++) {
        let total = 0;
        for (let q = h * group; q < (h + 1) * group; q++)
          total += attention[lastRow + q * maxLive + i];
        scores[h * maxLive + i] = total / group;
      }
    }
    return scores;
  }
}

/** The TOVA provider (one keep set per layer unless `granularity` says otherwise). */
export const tovaProvider = scorerProvider({
  name: 'tova',
  summary: 'keeps what the newest query attends to most, averaged over heads (Oren et al. 2024)',
  extra: {},
  create: (shared) => new TOVAPolicy(shared),
});
