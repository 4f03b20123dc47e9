import type { KVCacheStore, LayerControls, ReadSelector } from '@lethe/kv-cache';
import { assertFraction, LetheError } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkAttentionMemory } from './attention-memory';
import { checkCacheStore } from './cache-store-check';
import { checkPerLayer, checkTokenIds } from './forward-checks';
import type { BatchControls } from './types';

/**
 * Validates the inputs of a cached step before anything is computed or mutated: distinct caches
 * implementing {@link KVCacheStore} (checked structurally, see {@link checkCacheStore}) matching
 * the model's geometry, storing values, all layers at the same length, gates stored
 * exactly when a key-bias hook is given; one non-empty chunk of in-vocabulary ids per cache,
 * within the model's context, whose attention fits the backend's memory (see
 * {@link checkAttentionMemory}); controls with one list of per-layer entries per cache, each
 * `tokenKeep` a rate in (0, 1] (below 1 only in decode steps, one token per sequence); a read
 * selector (see {@link checkReadSelector}) whose `pageSize` equals every cache's and whose
 * `needs` every cache can serve.
 *
 * @throws LetheError `E_ARG` / `E_SHAPE` / `E_STATE` naming the argument.
 */
export function checkStepInputs(
  config: ModelConfig,
  caches: readonly KVCacheStore[],
  chunks: readonly Int32Array[],
  controls: BatchControls | undefined,
  hasKeyBias: boolean,
  chunkArgument: string,
  readSelector?: ReadSelector,
): void {
  if (!Array.isArray(caches) || caches.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of KVCacheStore', 'caches');
  }
  if (new Set(caches).size !== caches.length) {
    throw new LetheError('E_ARG', 'the same cache appears twice in the batch', 'caches');
  }
  caches.forEach((cache, b) => {
    checkCache(config, cache, hasKeyBias, `caches[${b}]`);
  });
  if (!Array.isArray(chunks)) {
    throw new LetheError('E_ARG', 'must be an array of Int32Array chunks', chunkArgument);
  }
  if (chunks.length !== caches.length) {
    throw new LetheError(
      'E_SHAPE',
      `expected ${caches.length} entries (one per cache), got ${chunks.length}`,
      chunkArgument,
    );
  }
  chunks.forEach((chunk, b) => {
    if (!(chunk instanceof Int32Array) || chunk.length === 0) {
      throw new LetheError('E_ARG', 'must be a non-empty Int32Array', `${chunkArgument}[${b}]`);
    }
    checkTokenIds(chunk, config.vocab_size, `${chunkArgument}[${b}]`);
    const end = caches[b]!.length(0) + chunk.length;
    if (end > config.max_position_embeddings) {
      throw new LetheError(
        'E_ARG',
        `would take sequence ${b} to ${end} positions, past the model's context of ${config.max_position_embeddings} (max_position_embeddings)`,
        `${chunkArgument}[${b}]`,
      );
    }
  });
  const width = Math.max(...chunks.map((chunk) => chunk.length));
  checkAttentionMemory(
    {
      batch: caches.length,
      queryHeads: config.num_attention_heads,
      queries: width,
      keys: Math.max(...caches.map(mostLive)) + width,
      layers: config.num_hidden_layers,
    },
    chunkArgument,
  );
  if (controls !== undefined) {
    if (!Array.isArray(controls) || controls.length !== caches.length) {
      throw new LetheError(
        'E_SHAPE',
        `expected one entry per cache (${caches.length})`,
        'controls',
      );
    }
    controls.forEach((perLayer, b) => {
      if (perLayer === undefined) return;
      checkPerLayer(perLayer, config.num_hidden_layers, `controls[${b}]`);
      perLayer.forEach((control: LayerControls | undefined, l: number) => {
        checkTokenKeep(control?.tokenKeep, width, `controls[${b}][${l}].tokenKeep`);
      });
    });
  }
  if (readSelector !== undefined) {
    checkReadSelector(readSelector);
    caches.forEach((cache, b) => {
      checkSelectorFits(readSelector, cache, `caches[${b}]`);
    });
  }
}

/**
 * Checks a `tokenKeep` control: undefined, or a number in (0, 1]; below 1 (a sparse read) only
 * in a decode step (`width` 1), since page selection is per query token.
 *
 * @throws LetheError `E_ARG` naming `argument` for a non-number or a sparse read in a multi-token
 *   chunk, `E_BUDGET` for a rate outside (0, 1] or NaN.
 */
function checkTokenKeep(keepRate: unknown, width: number, argument: string): void {
  if (keepRate === undefined) return;
  if (typeof keepRate !== 'number') {
    throw new LetheError('E_ARG', 'must be a keep rate in (0, 1]', argument);
  }
  assertFraction(keepRate, argument);
  if (keepRate < 1 && width > 1) {
    throw new LetheError(
      'E_ARG',
      'a sparse read (below 1) applies to decode steps (one token per sequence) only; prefill reads densely',
      argument,
    );
  }
}

/** The most live entries any KV head of any layer of `cache` holds. */
function mostLive(cache: KVCacheStore): number {
  let most = 0;
  for (let l = 0; l < cache.geometry.layers; l++) most = Math.max(most, ...cache.liveCounts(l));
  return most;
}

/**
 * Validates a read selector on its own: an object with a `selectPages` method, a positive
 * integer `pageSize`, and `needs` that a runtime can serve inside a layer (no `hidden`: the
 * selector gets the current query instead).
 *
 * @throws LetheError `E_ARG` naming `readSelector` or the bad field.
 */
export function checkReadSelector(selector: ReadSelector): void {
  if (
    typeof selector !== 'object' ||
    selector === null ||
    typeof selector.selectPages !== 'function'
  ) {
    throw new LetheError('E_ARG', 'must be a ReadSelector (with selectPages)', 'readSelector');
  }
  if (!(Number.isInteger(selector.pageSize) && selector.pageSize > 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${selector.pageSize}`,
      'readSelector.pageSize',
    );
  }
  const needs = selector.needs;
  if (typeof needs !== 'object' || needs === null) {
    throw new LetheError('E_ARG', 'must be an ObservationNeeds object', 'readSelector.needs');
  }
  if (needs.hidden) {
    throw new LetheError(
      'E_ARG',
      'a read selector runs inside a layer, where no final hidden state exists; it gets the current query instead',
      'readSelector.needs.hidden',
    );
  }
}

/** Throws unless `cache` has the selector's page size and keeps what the selector needs. */
function checkSelectorFits(selector: ReadSelector, cache: KVCacheStore, argument: string): void {
  const { pageSize } = cache.geometry;
  if (selector.pageSize !== pageSize) {
    throw new LetheError(
      'E_ARG',
      `is ${selector.pageSize} but ${argument} has pages of ${pageSize} entries`,
      'readSelector.pageSize',
    );
  }
  const { attentionWindow, accumulatedAttention } = selector.needs;
  if (attentionWindow > cache.queryWindow) {
    throw new LetheError(
      'E_STATE',
      `the read selector needs ${attentionWindow} recent queries but the cache keeps queryWindow = ${cache.queryWindow}`,
      argument,
    );
  }
  if (accumulatedAttention && !cache.trackAttention) {
    throw new LetheError(
      'E_STATE',
      'the read selector needs accumulated attention but the cache was created without trackAttention',
      argument,
    );
  }
}

function checkCache(
  config: ModelConfig,
  cache: KVCacheStore,
  hasKeyBias: boolean,
  argument: string,
): void {
  checkCacheStore(cache, argument);
  const { layers, kvHeads, headDim } = cache.geometry;
  if (
    layers !== config.num_hidden_layers ||
    kvHeads !== config.num_key_value_heads ||
    headDim !== config.head_dim ||
    cache.queryHeads !== config.num_attention_heads
  ) {
    throw new LetheError(
      'E_ARG',
      `geometry (layers ${layers}, kvHeads ${kvHeads}, headDim ${headDim}, queryHeads ${cache.queryHeads}) does not match the model (${config.num_hidden_layers}, ${config.num_key_value_heads}, ${config.head_dim}, ${config.num_attention_heads})`,
      argument,
    );
  }
  if (!cache.storeValues) throw new LetheError('E_STATE', 'the cache stores no values', argument);
  if (cache.storeGates !== hasKeyBias) {
    throw new LetheError(
      'E_STATE',
      cache.storeGates
        ? 'the cache stores gates: pass a keyBias hook to compute them'
        : 'a keyBias hook needs caches created with storeGates: true',
      argument,
    );
  }
  const length = cache.length(0);
  for (let l = 1; l < layers; l++) {
    if (cache.length(l) !== length) {
      throw new LetheError(
        'E_STATE',
        `layer ${l} holds ${cache.length(l)} tokens, layer 0 ${length}`,
        argument,
      );
    }
  }
}
