import type { KVCacheOptions } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/index';
import type { SequencePolicies } from './sequence-state';

/**
 * What a run reads of its caches besides what the contract's asynchronous reads serve: a cache
 * made for it (`SessionOptions.createCache`) may keep its keys where only its device reads them
 * (`@lethe/kernels-webgpu`'s `DeviceKVCache`) unless `hostKeys`.
 */
export interface CacheReads {
  /**
   * Whether the run reads keys on the host synchronously: a read selector whose observation holds
   * keys, values, window attention or page key bounds and that cannot be ranked on the device (no
   * `pageRanking`), or a run whose ranked reads only the host can take: a read selector's pages
   * and SOL's κ together (their reads intersect).
   */
  readonly hostKeys: boolean;
  /**
   * Whether a device cache keeps page key bounds for ranking pages where the keys are: a read
   * selector with a `pageRanking` (Quest) or a compute policy (SOL's κ), the host keeping no keys.
   */
  readonly pageBounds: boolean;
}

/** The {@link CacheReads} of a sequence run under `policies`. */
export function sequenceCacheReads(policies: SequencePolicies): CacheReads {
  const selector = policies.readSelector;
  const needs = selector?.needs;
  const selectorReadsKeys =
    needs !== undefined &&
    (needs.keys || needs.values || needs.attentionWindow > 0 || needs.pageKeyBounds === true);
  const ranks = typeof selector?.pageRanking === 'function' || policies.compute !== undefined;
  const hostOnly = selector !== undefined && policies.compute !== undefined;
  const hostKeys =
    (selectorReadsKeys && typeof selector?.pageRanking !== 'function') || (ranks && hostOnly);
  return { hostKeys, pageBounds: ranks && !hostKeys };
}

/**
 * The options of the cache of a sequence run under `policies`: the model's geometry with
 * `pageSize`, the eviction policy's anchors, the query window and attention tracking that the
 * eviction policy and read selector need, gates when the eviction policy has a gate, and no
 * visibility trace with a KV refresh (`compute.refreshEvery`: a `KVCache` with a trace cannot
 * truncate).
 */
export function sequenceCacheOptions(
  model: DecoderModel,
  policies: SequencePolicies,
  pageSize: number,
): KVCacheOptions {
  const config = model.config;
  const needs = policies.eviction?.needs;
  const readNeeds = policies.readSelector?.needs;
  return {
    geometry: {
      layers: config.num_hidden_layers,
      kvHeads: config.num_key_value_heads,
      headDim: model.headDim,
      pageSize,
    },
    queryHeads: config.num_attention_heads,
    anchors: policies.eviction?.anchors,
    queryWindow: Math.max(needs?.attentionWindow ?? 0, readNeeds?.attentionWindow ?? 0),
    trackAttention:
      (needs?.accumulatedAttention ?? false) || (readNeeds?.accumulatedAttention ?? false),
    storeGates: policies.eviction?.gate !== undefined,
    // A refresh truncates the cache, which a visibility trace cannot follow.
    ...(policies.compute?.refreshEvery === undefined ? {} : { trace: false }),
  };
}
