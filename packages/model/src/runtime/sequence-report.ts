import type { ModelConfig } from '../io/index';
import type { SequenceCacheReport } from './batch-request';
import type { SequenceState } from './sequence-state';

/**
 * The {@link SequenceCacheReport} of one sequence: its cache's accounting (live, peak, rounds),
 * the entries its rounds evicted, its peak against the full cache's for the tokens it fed, its
 * decode reads, compute usage and refreshes. `state` undefined (a request that never ran): all 0.
 */
export function sequenceReport(
  state: SequenceState | undefined,
  config: ModelConfig,
): SequenceCacheReport {
  const layers = config.num_hidden_layers;
  if (state === undefined) {
    return {
      livePerLayer: new Int32Array(layers),
      peakPerLayer: new Int32Array(layers),
      peakTotal: 0,
      evictionRounds: new Int32Array(layers),
      evictedEntries: 0,
      fullCacheEntries: 0,
      realisedBudget: 0,
      reads: { entries: 0, live: 0 },
      refreshes: 0,
    };
  }
  const stats = state.cache.stats();
  const fullCacheEntries = state.cache.length(0) * layers * config.num_key_value_heads;
  return {
    livePerLayer: stats.livePerLayer,
    peakPerLayer: stats.peakPerLayer,
    peakTotal: stats.peakTotal,
    evictionRounds: stats.evictionRounds,
    evictedEntries: state.eviction?.evictedEntries ?? 0,
    fullCacheEntries,
    realisedBudget: fullCacheEntries === 0 ? 0 : stats.peakTotal / fullCacheEntries,
    reads: state.decodeReads,
    ...(state.compute === undefined ? {} : { compute: state.computeUsage }),
    refreshes: state.refreshes,
  };
}
