/**
 * `@lethe/kv-cache`: a paged host-memory KV cache with ragged per-head live sets, provenance,
 * exact accounting and visibility traces (replay masks), plus the policy API that every
 * eviction policy, compute policy and read selector of Lethe implements.
 *
 * @packageDocumentation
 */
export type { CacheStats } from './cache/accounting';
export { KVCache } from './cache/kv-cache';
export type { LayerView } from './cache/layer-view';
export {
  type CacheGeometryInput,
  cacheGeometry,
  DEFAULT_PAGE_SIZE,
  type KVCacheOptions,
} from './cache/options';
export { CACHE_FORMAT_VERSION } from './cache/serialization';
export type { Anchors, CacheGeometry } from './geometry';
export type { ComputePolicy, LayerControls, StepObservation } from './policy/compute-policy';
export type { EvictionPolicy, KeepDecision, TriggerContext } from './policy/eviction-policy';
export { type LayerObservation, NO_NEEDS, type ObservationNeeds } from './policy/observation';
export type { RandomSource } from './policy/random-source';
export type { ReadSelector } from './policy/read-selector';
export * from './selection/index';
