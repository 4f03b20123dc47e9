import type { Accounting } from './accounting';
import type { LayerState } from './layer-state';
import type { ResolvedCacheOptions } from './options';
import type { SlotLayout } from './page';

/** The complete value of a cache: what `clone()` copies and `serialize()` writes. */
export interface CacheState {
  readonly options: ResolvedCacheOptions;
  readonly layers: readonly LayerState[];
  readonly accounting: Accounting;
}

/** The page slot layout implied by resolved options. */
export function slotLayoutOf(options: ResolvedCacheOptions): SlotLayout {
  return Object.freeze({
    pageSize: options.geometry.pageSize,
    headDim: options.geometry.headDim,
    storeKeys: options.storeKeys,
    storeValues: options.storeValues,
    storeGates: options.storeGates,
    trackAttention: options.trackAttention,
  });
}
