import { assertInteger, LetheError } from '@lethe/core';
import { realmKernel } from '../attend/realm-kernel';
import type { LayerObservation, ObservationNeeds, ObservedPageBounds } from '../policy/observation';
import { type AttentionShape, windowAttention } from './attention';
import type { HeadStore } from './head-store';
import type { LayerState } from './layer-state';
import type { ResolvedCacheOptions } from './options';
import type { Page } from './page';

/** What of a cache decides which observation needs it can serve. */
export interface ObservationServing {
  readonly queryWindow: number;
  readonly trackAttention: boolean;
  /** Default true. */
  readonly storeKeys?: boolean;
  readonly storeValues: boolean;
}

/**
 * Throws unless `needs` can be served by a cache with `options` (its query window, attention
 * tracking and values) and `hidden` is given when needed: what `KVCacheStore.observe` throws
 * (`E_STATE` naming the need, `E_ARG` naming `needs` or `hidden`). Another implementation of the
 * contract calls it to refuse what `KVCache` refuses.
 */
export function checkObservationNeeds(
  needs: ObservationNeeds,
  options: ObservationServing,
  hidden: unknown,
): void {
  if (typeof needs !== 'object' || needs === null) {
    throw new LetheError('E_ARG', 'must be an ObservationNeeds object', 'needs');
  }
  assertInteger(needs.attentionWindow, 'needs.attentionWindow', 0);
  if (needs.attentionWindow > options.queryWindow) {
    throw new LetheError(
      'E_STATE',
      `asks for ${needs.attentionWindow} queries but the cache keeps queryWindow = ${options.queryWindow}`,
      'needs.attentionWindow',
    );
  }
  if (needs.accumulatedAttention && !options.trackAttention) {
    throw new LetheError(
      'E_STATE',
      'the cache was created without trackAttention',
      'needs.accumulatedAttention',
    );
  }
  if (options.storeKeys === false) {
    for (const need of ['keys', 'pageKeyBounds'] as const) {
      if (needs[need] === true) {
        throw new LetheError(
          'E_STATE',
          'the cache was created with storeKeys = false',
          `needs.${need}`,
        );
      }
    }
    if (needs.attentionWindow > 0) {
      throw new LetheError(
        'E_STATE',
        'the attention of queries is computed from keys, and the cache was created with storeKeys = false',
        'needs.attentionWindow',
      );
    }
  }
  if (needs.values && !options.storeValues) {
    throw new LetheError(
      'E_STATE',
      'the cache was created with storeValues = false',
      'needs.values',
    );
  }
  if (needs.hidden && hidden === undefined) {
    throw new LetheError('E_ARG', 'the policy needs the hidden state but none was given', 'hidden');
  }
  if (hidden !== undefined && !(hidden instanceof Float32Array)) {
    throw new LetheError('E_DTYPE', 'must be a Float32Array', 'hidden');
  }
}

/** Packs one page field of every head into a fresh `[kvHeads, maxLive, width]` array. */
function packed<A extends Float32Array | Int32Array>(
  heads: readonly HeadStore[],
  maxLive: number,
  width: number,
  out: A,
  select: (page: Page) => Float32Array | Int32Array | Float64Array,
): A {
  for (let h = 0; h < heads.length; h++)
    heads[h].copyField(select, width, out, h * maxLive * width);
  return out;
}

/** Every head's page key bounds packed into fresh `[kvHeads, maxPages, headDim]` arrays. */
function observedPageBounds(
  heads: readonly HeadStore[],
  maxLive: number,
  pageSize: number,
  headDim: number,
): ObservedPageBounds {
  const maxPages = Math.ceil(maxLive / pageSize);
  const min = new Float32Array(heads.length * maxPages * headDim);
  const max = new Float32Array(heads.length * maxPages * headDim);
  heads.forEach((store, h) => {
    const bounds = store.pageKeyBounds();
    min.set(bounds.min, h * maxPages * headDim);
    max.set(bounds.max, h * maxPages * headDim);
  });
  return { pageSize, maxPages, min, max };
}

/**
 * Builds the observation of one layer for a policy: positions and ages always; keys, values,
 * gates, query-window attention, accumulated attention, page key bounds and the hidden state as
 * `needs` asks.
 * Every array is freshly allocated (the policy may keep it).
 */
export function buildObservation(
  layer: number,
  state: LayerState,
  options: ResolvedCacheOptions,
  needs: ObservationNeeds,
  hidden: Float32Array | undefined,
): LayerObservation {
  checkObservationNeeds(needs, options, hidden);
  const { kvHeads, headDim, pageSize } = options.geometry;
  const heads = state.heads;
  const step = state.length;
  const liveCounts = new Int32Array(kvHeads);
  let maxLive = 0;
  for (let h = 0; h < kvHeads; h++) {
    liveCounts[h] = heads[h].live;
    maxLive = Math.max(maxLive, heads[h].live);
  }
  const scalars = kvHeads * maxLive;
  const vectors = scalars * headDim;

  const positions = new Int32Array(scalars).fill(-1);
  packed(heads, maxLive, 1, positions, (page) => page.positions);
  const ages = new Int32Array(scalars);
  for (let h = 0; h < kvHeads; h++) heads[h].copyAges(step, ages, h * maxLive);

  const shape: AttentionShape = { kvHeads, queryHeads: options.queryHeads, headDim, pageSize };
  const windowSize = Math.min(needs.attentionWindow, state.queries?.size ?? 0);
  const recent = windowSize > 0 ? state.queries!.latest(windowSize) : undefined;
  return {
    layer,
    kvHeads,
    queryHeads: options.queryHeads,
    headDim,
    step,
    liveCounts,
    maxLive,
    positions,
    ages,
    window: windowSize,
    ...(options.storeGates
      ? { gates: packed(heads, maxLive, 1, new Float32Array(scalars), (page) => page.gates!) }
      : {}),
    ...(needs.keys
      ? { keys: packed(heads, maxLive, headDim, new Float32Array(vectors), (page) => page.keys) }
      : {}),
    ...(needs.values
      ? {
          values: packed(
            heads,
            maxLive,
            headDim,
            new Float32Array(vectors),
            (page) => page.values!,
          ),
        }
      : {}),
    ...(needs.attentionWindow > 0
      ? {
          queries: recent?.queries ?? new Float32Array(0),
          attention: recent
            ? windowAttention(
                heads,
                recent.queries,
                recent.positions,
                maxLive,
                shape,
                realmKernel(),
              )
            : new Float32Array(0),
        }
      : {}),
    ...(needs.accumulatedAttention
      ? {
          accumulatedAttention: packed(
            heads,
            maxLive,
            1,
            new Float32Array(scalars),
            (page) => page.attention!,
          ),
          attentionCounts: packed(
            heads,
            maxLive,
            1,
            new Float32Array(scalars),
            (page) => page.attentionCounts!,
          ),
        }
      : {}),
    ...(needs.pageKeyBounds
      ? { pageKeyBounds: observedPageBounds(heads, maxLive, pageSize, headDim) }
      : {}),
    ...(hidden !== undefined ? { hidden } : {}),
  };
}
