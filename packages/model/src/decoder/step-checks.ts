import { assertFraction, LetheError } from '@lethe/core';
import type { KVCacheStore, LayerControls, ReadSelector } from '@lethe/kv-cache';
import type { ModelConfig } from '../io/index';
import { checkCacheStore } from './cache-store-check';
import { checkPerLayer, checkTokenIds } from './forward-checks';
import { checkStepMemory } from './step-memory';
import type { BatchControls, KeyBiasHook } from './types';

/**
 * Validates the inputs of a cached step before anything is computed or mutated: distinct caches
 * implementing {@link KVCacheStore} (checked structurally, see {@link checkCacheStore}) matching
 * the model's geometry, storing values, all layers at the same length, gates stored
 * exactly by the caches whose sequence has a key-bias hook; one non-empty chunk of in-vocabulary
 * ids per cache, within the model's context, whose step fits the backend's memory (see
 * {@link checkStepMemory}); controls with one list of per-layer entries per cache, each
 * `tokenKeep` a rate in (0, 1] (below 1 only in decode steps, one token per sequence); read
 * selectors (see {@link checkReadSelector}) whose `pageSize` equals their cache's and whose
 * `needs` their cache can serve.
 *
 * @param keyBias each sequence's key-bias hook (see {@link sequenceHooks}), or undefined: none.
 * @param readSelectors each sequence's read selector (see {@link sequenceSelectors}), or undefined.
 * @param everyPosition the sequences whose every position gets logits (they count in the memory).
 * @throws LetheError `E_ARG` / `E_SHAPE` / `E_STATE` naming the argument.
 */
export function checkStepInputs(
  config: ModelConfig,
  caches: readonly KVCacheStore[],
  chunks: readonly Int32Array[],
  controls: BatchControls | undefined,
  keyBias: readonly (KeyBiasHook | undefined)[] | undefined,
  chunkArgument: string,
  readSelectors?: readonly (ReadSelector | undefined)[],
  everyPosition?: readonly boolean[],
): void {
  if (!Array.isArray(caches) || caches.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of KVCacheStore', 'caches');
  }
  if (new Set(caches).size !== caches.length) {
    throw new LetheError('E_ARG', 'the same cache appears twice in the batch', 'caches');
  }
  caches.forEach((cache, b) => {
    checkCache(config, cache, keyBias?.[b] !== undefined, `caches[${b}]`);
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
  const rows = chunks.reduce((n, chunk) => n + chunk.length, 0);
  const {
    num_attention_heads: queryHeads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
  } = config;
  checkStepMemory(
    {
      rows,
      logitRows:
        caches.length +
        chunks.reduce((n, chunk, b) => n + (everyPosition?.[b] === true ? chunk.length : 0), 0),
      hiddenSize: config.hidden_size,
      intermediateSize: config.intermediate_size,
      projections: (queryHeads + 2 * kvHeads) * headDim,
      vocabSize: config.vocab_size,
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
  readSelectors?.forEach((selector, b) => {
    if (selector === undefined) return;
    const argument = readSelectors.every((s) => s === selector)
      ? 'readSelector'
      : `readSelector[${b}]`;
    checkReadSelector(selector, argument);
    checkSelectorFits(selector, caches[b]!, `caches[${b}]`, argument);
  });
}

/**
 * The key-bias hook of each of `batch` sequences from a step's `keyBias` option: one hook for
 * all, or an array with one entry per sequence; undefined when no sequence has one.
 *
 * @throws LetheError `E_ARG` naming `keyBias` when it is neither a function nor an array, or
 *   `keyBias[b]` for an entry that is neither undefined nor a function; `E_SHAPE` naming `keyBias`
 *   for an array whose length is not the batch's.
 */
export function sequenceHooks(
  keyBias: KeyBiasHook | readonly (KeyBiasHook | undefined)[] | undefined,
  batch: number,
): (KeyBiasHook | undefined)[] | undefined {
  const hooks = perSequence(keyBias, batch, 'keyBias', (hook) => typeof hook === 'function');
  hooks?.forEach((hook, b) => {
    if (hook !== undefined && typeof hook !== 'function') {
      throw new LetheError(
        'E_ARG',
        'must be a key-bias hook (a function) or undefined',
        `keyBias[${b}]`,
      );
    }
  });
  return hooks;
}

/**
 * The read selector of each of `batch` sequences from a decode step's `readSelector` option: one
 * selector for all, or an array with one entry per sequence; undefined when no sequence has one.
 * The selectors themselves are checked by {@link checkStepInputs}.
 *
 * @throws LetheError `E_SHAPE` naming `readSelector` for an array whose length is not the batch's.
 */
export function sequenceSelectors(
  readSelector: ReadSelector | readonly (ReadSelector | undefined)[] | undefined,
  batch: number,
): (ReadSelector | undefined)[] | undefined {
  return perSequence(readSelector, batch, 'readSelector', (value) => !Array.isArray(value));
}

/** `option` as one entry per sequence: `single(option)` repeated, or the array as given. */
function perSequence<T>(
  option: T | readonly (T | undefined)[] | undefined,
  batch: number,
  argument: string,
  single: (value: unknown) => boolean,
): (T | undefined)[] | undefined {
  if (option === undefined) return undefined;
  if (single(option)) return new Array<T>(batch).fill(option as T);
  if (!Array.isArray(option)) {
    throw new LetheError(
      'E_ARG',
      'must be one value for the batch or an array of one per sequence',
      argument,
    );
  }
  if (option.length !== batch) {
    throw new LetheError(
      'E_SHAPE',
      `expected one entry per sequence (${batch}), got ${option.length}`,
      argument,
    );
  }
  return option.some((value) => value !== undefined) ? [...option] : undefined;
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

/**
 * Validates a read selector on its own: an object with a `selectPages` method, a positive
 * integer `pageSize`, and `needs` that a runtime can serve inside a layer (no `hidden`: the
 * selector gets the current query instead).
 *
 * @param argument the selector's name in errors (default `readSelector`).
 * @throws LetheError `E_ARG` naming `argument` or its bad field (`readSelector.pageSize`, …).
 */
export function checkReadSelector(selector: ReadSelector, argument = 'readSelector'): void {
  if (
    typeof selector !== 'object' ||
    selector === null ||
    typeof selector.selectPages !== 'function'
  ) {
    throw new LetheError('E_ARG', 'must be a ReadSelector (with selectPages)', argument);
  }
  if (!(Number.isInteger(selector.pageSize) && selector.pageSize > 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${selector.pageSize}`,
      `${argument}.pageSize`,
    );
  }
  const needs = selector.needs;
  if (typeof needs !== 'object' || needs === null) {
    throw new LetheError('E_ARG', 'must be an ObservationNeeds object', `${argument}.needs`);
  }
  if (needs.hidden) {
    throw new LetheError(
      'E_ARG',
      'a read selector runs inside a layer, where no final hidden state exists; it gets the current query instead',
      `${argument}.needs.hidden`,
    );
  }
}

/** Throws unless `cache` has the selector's page size and keeps what the selector needs. */
function checkSelectorFits(
  selector: ReadSelector,
  cache: KVCacheStore,
  cacheArgument: string,
  argument: string,
): void {
  const { pageSize } = cache.geometry;
  if (selector.pageSize !== pageSize) {
    throw new LetheError(
      'E_ARG',
      `is ${selector.pageSize} but ${cacheArgument} has pages of ${pageSize} entries`,
      `${argument}.pageSize`,
    );
  }
  const { attentionWindow, accumulatedAttention } = selector.needs;
  if (attentionWindow > cache.queryWindow) {
    throw new LetheError(
      'E_STATE',
      `the read selector needs ${attentionWindow} recent queries but the cache keeps queryWindow = ${cache.queryWindow}`,
      cacheArgument,
    );
  }
  if (accumulatedAttention && !cache.trackAttention) {
    throw new LetheError(
      'E_STATE',
      'the read selector needs accumulated attention but the cache was created without trackAttention',
      cacheArgument,
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
