import { assertInteger, LetheError } from '@lethe/core';
import type { Anchors, CacheGeometry } from '../geometry';
import type { KeepDecision } from '../policy/eviction-policy';
import type { LayerObservation, ObservationNeeds } from '../policy/observation';
import type { PageKeyBounds } from '../read/page-key-bounds';
import { Accounting, type CacheStats } from './accounting';
import { type AttentionShape, accumulateAttention } from './attention';
import type { GatherTarget, KVCacheStore } from './cache-contract';
import { type CacheState, slotLayoutOf } from './cache-state';
import { checkGather } from './gather-checks';
import {
  checkFinite,
  checkFloat32,
  checkIndex,
  checkInt32,
  checkNewPositions,
} from './input-checks';
import { blockKeepMask, indexKeepMask, protectAnchors } from './keep-mask';
import { LayerState } from './layer-state';
import type { LayerView } from './layer-view';
import { buildObservation } from './observation-builder';
import { type KVCacheOptions, type ResolvedCacheOptions, resolveCacheOptions } from './options';
import { pageByteLength, type SlotLayout, slotByteLength } from './page';
import { decodeCacheState, encodeCacheState } from './serialization';

/**
 * The KV cache of ONE sequence (a batch is an array of caches), in host memory.
 *
 * Each (layer, KV head) holds a ragged live set in fixed-size pages; every entry carries its
 * key, value, optional gate, token position, creation stamp and (optionally) the attention it
 * has received. Evictions (`keep`, `keepBlocks`) are permanent, protect the anchors, compact
 * the survivors and release empty pages. A visibility trace records when each entry was
 * evicted, from which {@link KVCache.replayMask} rebuilds what every query saw (NGC §4.5).
 *
 * @example
 * ```ts
 * const cache = new KVCache({ geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2 }), queryHeads: 1 });
 * cache.append(0, new Float32Array([1, 0, 0, 1]), new Float32Array([1, 1, 2, 2]), new Int32Array([0, 1]));
 * cache.keep(0, { granularity: 'layer', keep: new Int32Array([1]) });
 * cache.view(0).positions; // Int32Array [1]
 * cache.replayMask(0);     // [[1, 0], [1, 1]]: token 1 saw token 0 before it was evicted
 * ```
 */
export class KVCache implements KVCacheStore {
  /** Layers, KV heads, head width, page size. */
  readonly geometry: CacheGeometry;
  /** Entries never evicted. */
  readonly anchors: Anchors;
  /** Query heads (a multiple of `geometry.kvHeads`). */
  readonly queryHeads: number;
  /** Whether keys are stored (without them: the bookkeeping only, see `KVCacheOptions.storeKeys`). */
  readonly storeKeys: boolean;
  /** Whether values are stored. */
  readonly storeValues: boolean;
  /** Whether a gate per entry is stored. */
  readonly storeGates: boolean;
  /** How many recent queries per layer are kept for observations (at most `maxQueryWindow`). */
  readonly queryWindow: number;
  /** Whether attention received per entry is accumulated. */
  readonly trackAttention: boolean;
  /** Whether visibility is traced (replay masks). */
  readonly trace: boolean;

  private readonly options: ResolvedCacheOptions;
  private readonly layout: SlotLayout;
  private layers: LayerState[];
  private accounting: Accounting;

  /**
   * @throws LetheError `E_ARG` naming the first bad option, among them `queryWindow` when its
   *   window would pass `MAX_QUERY_WINDOW_FLOATS` (`maxQueryWindow(queryHeads, headDim)`),
   *   refused before anything is allocated.
   */
  constructor(options: KVCacheOptions) {
    const resolved = resolveCacheOptions(options);
    this.options = resolved;
    this.geometry = resolved.geometry;
    this.anchors = resolved.anchors;
    this.queryHeads = resolved.queryHeads;
    this.storeKeys = resolved.storeKeys;
    this.storeValues = resolved.storeValues;
    this.storeGates = resolved.storeGates;
    this.queryWindow = resolved.queryWindow;
    this.trackAttention = resolved.trackAttention;
    this.trace = resolved.trace;
    this.layout = slotLayoutOf(resolved);
    this.layers = Array.from({ length: resolved.geometry.layers }, () =>
      LayerState.empty(resolved, this.layout),
    );
    this.accounting = new Accounting(resolved.geometry.layers, resolved.geometry.kvHeads);
  }

  /** Tokens appended so far to `layer` (all layers advance in lock-step during decode). */
  length(layer: number): number {
    return this.layerState(layer).length;
  }

  /** Live entries per KV head of `layer`, `[kvHeads]` (a fresh array). */
  liveCounts(layer: number): Int32Array {
    return Int32Array.from(this.layerState(layer).heads, (store) => store.live);
  }

  /**
   * Appends `T = positions.length` tokens to one layer.
   *
   * @param keys `[T, kvHeads, headDim]`, after RoPE; ignored (any length) when the cache stores no
   *   keys.
   * @param values `[T, kvHeads, headDim]`; ignored (any length) when the cache stores no values.
   * @param positions `[T]`, ≥ 0, strictly increasing and greater than every earlier position.
   * @param gates `[T, kvHeads]`; required exactly when the cache stores gates.
   * @throws `E_ARG` (`layer`, `positions`, non-finite `keys`/`values`/`gates`, unexpected or
   *   missing `gates`), `E_DTYPE`, `E_SHAPE` naming the argument.
   */
  append(
    layer: number,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates?: Float32Array,
  ): void {
    const state = this.layerState(layer);
    const { kvHeads, headDim } = this.geometry;
    const tokens = checkInt32(positions, 'positions').length;
    if (this.storeKeys) checkFloat32(keys, tokens * kvHeads * headDim, 'keys');
    if (this.storeValues) checkFloat32(values, tokens * kvHeads * headDim, 'values');
    if (this.storeGates) {
      if (gates === undefined)
        throw new LetheError('E_ARG', 'the cache stores gates: pass them', 'gates');
      checkFloat32(gates, tokens * kvHeads, 'gates');
    } else if (gates !== undefined) {
      throw new LetheError('E_ARG', 'the cache was created with storeGates = false', 'gates');
    }
    checkNewPositions(positions, state.lastPosition);
    if (this.storeKeys) checkFinite(keys, 'keys');
    if (this.storeValues) checkFinite(values, 'values');
    if (gates) checkFinite(gates, 'gates');
    if (tokens === 0) return;

    const base = state.length;
    const storedValues = this.storeValues ? values : undefined;
    for (let t = 0; t < tokens; t++) {
      for (let h = 0; h < kvHeads; h++) {
        const row = t * kvHeads + h;
        state.heads[h].push(
          keys,
          storedValues,
          row * headDim,
          gates ? gates[row] : 0,
          positions[t],
          base + t + 1,
        );
      }
    }
    state.positionLog.pushAll(positions);
    state.trace?.extend(tokens);
    for (let h = 0; h < kvHeads; h++) this.accounting.setLive(layer, h, state.heads[h].live);
    this.accounting.afterAppend(layer);
  }

  /**
   * Records the queries (after RoPE, `[T, queryHeads, headDim]`) of the `T` tokens just appended
   * to `layer`; `positions` must equal the positions of the last `T` appended tokens and follow
   * every query recorded before. Keeps the last `queryWindow`; with `trackAttention`, adds each
   * query's causal softmax attention (scale `1/sqrt(headDim)`) over the current live entries
   * of its KV head to those entries.
   */
  recordQueries(layer: number, queries: Float32Array, positions: Int32Array): void {
    const state = this.layerState(layer);
    const tokens = checkInt32(positions, 'positions').length;
    checkFloat32(queries, tokens * this.queryHeads * this.geometry.headDim, 'queries');
    checkFinite(queries, 'queries');
    if (tokens === 0) return;
    const log = state.positionLog;
    const first = log.length - tokens;
    for (let t = 0; t < tokens; t++) {
      if (first < 0 || positions[t] !== log.get(first + t)) {
        throw new LetheError(
          'E_ARG',
          `must equal the positions of the last ${tokens} appended tokens`,
          'positions',
        );
      }
    }
    if (positions[0] <= state.lastQueryPosition) {
      throw new LetheError('E_ARG', `position ${positions[0]} was already recorded`, 'positions');
    }
    if (this.trackAttention)
      accumulateAttention(state.heads, queries, positions, this.attentionShape());
    state.queries?.push(queries, positions);
    state.lastQueryPosition = positions[tokens - 1];
  }

  /**
   * Copies of the newest `min(count, recorded)` queries of the query window of `layer`,
   * `[n, queryHeads, headDim]` oldest first, and their positions: the queries an observation
   * with `attentionWindow = count` holds, without computing their attention (a runtime that
   * computes it elsewhere, on a device, reads them here).
   *
   * @throws `E_ARG` naming `layer`, or `count` unless it is an integer ≥ 0.
   */
  recentQueries(layer: number, count: number): { queries: Float32Array; positions: Int32Array } {
    const window = this.layerState(layer).queries;
    assertInteger(count, 'count', 0);
    const n = Math.min(count, window?.size ?? 0);
    if (window === undefined || n === 0) {
      return { queries: new Float32Array(0), positions: new Int32Array(0) };
    }
    return window.latest(n);
  }

  /**
   * Packed read of one layer for attention (see {@link LayerView}). The arrays are views into
   * scratch buffers: valid until the next mutation or the next `view()` of the same layer.
   */
  view(layer: number): LayerView {
    const state = this.layerState(layer);
    this.requireKeys('view');
    return state.scratch.pack(layer, state.heads, this.layout);
  }

  /**
   * Copies the keys (values, gates where `target` has them) of the live entries of one KV head
   * in `ranges` (sorted, disjoint `[start, end)` live-index pairs) into `target` from entry
   * `offset` on, one `TypedArray.set` per page run; see {@link KVCacheStore.gather}.
   *
   * @returns the number of entries copied.
   * @throws `E_ARG` (`layer`, `head`, `offset`, `ranges`), `E_DTYPE`, `E_SHAPE` (`ranges`, a
   *   `target` field too short), `E_STATE` (`target.values` / `target.gates` not stored,
   *   `storeKeys` false).
   */
  gather(
    layer: number,
    head: number,
    ranges: Int32Array,
    target: GatherTarget,
    offset: number,
  ): number {
    const state = this.layerState(layer);
    const store = state.heads[checkIndex(head, this.geometry.kvHeads, 'head')];
    this.requireKeys('gather');
    checkGather(ranges, target, offset, store.live, this);
    return store.gather(
      ranges,
      { keys: target.keys, values: target.values, gates: target.gates },
      offset,
    );
  }

  /**
   * Channel-wise min and max of the keys of every page of one KV head, `[pages, headDim]`,
   * maintained on append (the last page widens) and recomputed for the pages an eviction
   * rewrote. Views of the cache's storage: valid until the next mutation of the layer.
   *
   * @throws `E_ARG` naming `layer` or `head` when out of range; `E_STATE` naming `storeKeys` for a
   *   cache that stores no keys.
   */
  pageKeyBounds(layer: number, head: number): PageKeyBounds {
    const state = this.layerState(layer);
    this.requireKeys('pageKeyBounds');
    return state.heads[checkIndex(head, this.geometry.kvHeads, 'head')].pageKeyBounds();
  }

  /**
   * Observation of one layer for an eviction policy: positions and ages always; gates when
   * stored; keys, values, the last `needs.attentionWindow` queries and their attention over the
   * current live entries, accumulated attention, and `hidden` as `needs` asks. Arrays are fresh.
   *
   * @throws `E_STATE` when the cache cannot serve `needs` (query window too small, attention or
   *   values not kept), `E_ARG` naming `hidden` when needed and missing.
   */
  observe(layer: number, needs: ObservationNeeds, hidden?: Float32Array): LayerObservation {
    return buildObservation(layer, this.layerState(layer), this.options, needs, hidden);
  }

  /**
   * Permanent keep: keeps the live entries listed in `decision` (indices into the live entries,
   * any order) plus the anchors, evicts the rest, records the evictions in the trace and
   * compacts the pages. Counts one eviction round.
   *
   * @throws `E_ARG` naming `decision.keep` for a non-integer, out-of-range or repeated index;
   *   `E_SHAPE` naming `decision.keep` when a per-head decision has not one set per KV head;
   *   `E_STATE` naming `decision.granularity` for a layer decision while heads differ.
   */
  keep(layer: number, decision: KeepDecision): void {
    const state = this.layerState(layer);
    if (typeof decision !== 'object' || decision === null) {
      throw new LetheError('E_ARG', 'must be a KeepDecision', 'decision');
    }
    const heads = state.heads;
    let masks: Uint8Array[];
    if (decision.granularity === 'layer') {
      this.requireEqualHeads(state, 'decision.granularity');
      const mask = indexKeepMask(decision.keep, heads[0].live, 'decision.keep');
      masks = heads.map(() => mask.slice());
    } else if (decision.granularity === 'head') {
      if (!Array.isArray(decision.keep) || decision.keep.length !== heads.length) {
        throw new LetheError(
          'E_SHAPE',
          `needs one index set per KV head (${heads.length})`,
          'decision.keep',
        );
      }
      masks = heads.map((store, h) => indexKeepMask(decision.keep[h], store.live, 'decision.keep'));
    } else {
      throw new LetheError('E_ARG', "must be 'layer' or 'head'", 'decision.granularity');
    }
    this.applyKeep(layer, state, masks);
  }

  /**
   * Keeps whole blocks of `blockSize` consecutive live entries (block `b` = entries
   * `[b * blockSize, (b + 1) * blockSize)`, the last block possibly shorter) of one head, or of
   * every head (`'all'`, which requires the heads to hold the same live set). Anchors survive
   * regardless; everything else outside the chosen blocks is evicted. Counts one round.
   */
  keepBlocks(layer: number, head: number | 'all', blocks: Int32Array, blockSize: number): void {
    const state = this.layerState(layer);
    assertInteger(blockSize, 'blockSize', 1);
    const masks: (Uint8Array | undefined)[] = state.heads.map(() => undefined);
    if (head === 'all') {
      this.requireEqualHeads(state, 'head');
      const mask = blockKeepMask(blocks, blockSize, state.heads[0].live);
      for (let h = 0; h < masks.length; h++) masks[h] = mask.slice();
    } else {
      checkIndex(head, this.geometry.kvHeads, 'head');
      masks[head] = blockKeepMask(blocks, blockSize, state.heads[head].live);
    }
    this.applyKeep(layer, state, masks);
  }

  /**
   * Forgets the tokens appended after the first `length` of every layer, as if they had never
   * been appended: their entries in every KV head (live ones; evicted ones are gone already),
   * their positions, and the recorded queries at their positions. `length(layer)` becomes
   * `length`, so the next append continues from there (with positions from 0, the next token gets
   * position `length`). Entries of the kept tokens stay exactly as they are — evicted ones stay
   * evicted — and the page key bounds stay exact (the page cut through is recomputed). Live counts
   * and bytes fall accordingly; the peaks and `evictionRounds` are history and stay as they were.
   * A query-window slot the ring buffer overwrote before the truncation does not come back, so
   * the window may then hold fewer queries than a cache that never saw the forgotten tokens.
   * See {@link KVCacheStore.truncate}.
   *
   * @throws `E_STATE` naming `truncate` when the cache tracks attention (`trackAttention`: the
   *   accumulated sums include what the forgotten queries paid), keeps a visibility trace
   *   (`trace`: it records evictions made while the forgotten tokens were in), or evicted one of
   *   the `anchors.window` tokens before `length` (they would become the recent window, which is
   *   always live); `E_ARG` naming `length` unless it is an integer in `[0, length(layer)]` for
   *   every layer. Nothing changes then.
   */
  truncate(length: number): void {
    if (this.trackAttention) {
      throw new LetheError(
        'E_STATE',
        'the cache tracks attention: the accumulated sums include the forgotten queries',
        'truncate',
      );
    }
    if (this.trace) {
      throw new LetheError(
        'E_STATE',
        'the cache keeps a visibility trace (create it with trace = false to truncate)',
        'truncate',
      );
    }
    const shortest = Math.min(...this.layers.map((state) => state.length));
    if (!(Number.isInteger(length) && length >= 0 && length <= shortest)) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [0, ${shortest}], got ${length}`,
        'length',
      );
    }
    const broken = this.layers.findIndex(
      (state) => !state.keepsWindowAfterTruncate(length, this.anchors.window),
    );
    if (broken >= 0) {
      throw new LetheError(
        'E_STATE',
        `layer ${broken} evicted one of the last ${this.anchors.window} tokens before ${length}: ` +
          'they would be the recent-window anchors, which are always live',
        'truncate',
      );
    }
    this.layers.forEach((state, layer) => {
      state.truncate(length);
      state.heads.forEach((store, h) => {
        this.accounting.setLive(layer, h, store.live);
      });
    });
  }

  /** Occupancy snapshot (fresh arrays); see {@link CacheStats} for the exact semantics. */
  stats(): CacheStats {
    let pages = 0;
    for (const state of this.layers) for (const store of state.heads) pages += store.pageCount;
    return this.accounting.snapshot(
      pages,
      pageByteLength(this.layout),
      slotByteLength(this.layout),
    );
  }

  /**
   * Replay mask of one layer, `[T, T]` with `T = length(layer)`: element `(i, j)` is 1 when the
   * query of token `i` could see token `j` (both in append order, which is position order), i.e.
   * `j <= i < evictedAt(j)`. Row `i` is exactly the live set a query at token `i` saw. With
   * `head` omitted every KV head must have the same visibility (layer-granularity eviction).
   *
   * @throws `E_STATE` naming `trace` when tracing is off, or `head` when omitted while heads differ.
   */
  replayMask(layer: number, head?: number): Uint8Array {
    const trace = this.layerState(layer).trace;
    if (!trace)
      throw new LetheError('E_STATE', 'the cache was created with trace = false', 'trace');
    if (head === undefined) {
      if (!trace.headsAgree()) {
        throw new LetheError(
          'E_STATE',
          'KV heads of this layer saw different entries: pass a head',
          'head',
        );
      }
      return trace.mask(0);
    }
    return trace.mask(checkIndex(head, this.geometry.kvHeads, 'head'));
  }

  /** A deep, independent copy (e.g. one per rollout of a shared prompt). */
  clone(): KVCache {
    return KVCache.fromState({
      options: this.options,
      layers: this.layers.map((state) => state.clone()),
      accounting: this.accounting.clone(),
    });
  }

  /**
   * The complete cache as a versioned, checksummed binary blob (see `encodeCacheState`).
   *
   * @throws `E_STATE` naming `storeKeys` for a cache that stores no keys (it is not complete).
   */
  serialize(): Uint8Array {
    this.requireKeys('serialize');
    return encodeCacheState({
      options: this.options,
      layers: this.layers,
      accounting: this.accounting,
    });
  }

  /**
   * Rebuilds a cache from {@link KVCache.serialize} output.
   *
   * @throws `E_FORMAT` for anything truncated, corrupted, of another version or inconsistent;
   *   a partial cache is never returned.
   */
  static deserialize(bytes: Uint8Array): KVCache {
    return KVCache.fromState(decodeCacheState(bytes));
  }

  private static fromState(state: CacheState): KVCache {
    const cache = new KVCache(state.options);
    cache.layers = [...state.layers];
    cache.accounting = state.accounting;
    return cache;
  }

  /** Throws `E_STATE` naming `storeKeys` when the cache stores no keys (`what` needs them). */
  private requireKeys(what: string): void {
    if (!this.storeKeys) {
      throw new LetheError('E_STATE', `${what} reads keys, and the cache stores none`, 'storeKeys');
    }
  }

  private layerState(layer: number): LayerState {
    return this.layers[checkIndex(layer, this.geometry.layers, 'layer')];
  }

  private attentionShape(): AttentionShape {
    const { kvHeads, headDim, pageSize } = this.geometry;
    return { kvHeads, queryHeads: this.queryHeads, headDim, pageSize };
  }

  private requireEqualHeads(state: LayerState, argument: string): void {
    const first = state.heads[0];
    for (let h = 1; h < state.heads.length; h++) {
      if (!state.heads[h].samePositionsAs(first)) {
        throw new LetheError(
          'E_STATE',
          "KV heads of this layer hold different live sets; decide per head (granularity 'head')",
          argument,
        );
      }
    }
  }

  /** Protects anchors, traces evictions, compacts; `masks[h]` undefined leaves head `h` alone. */
  private applyKeep(
    layer: number,
    state: LayerState,
    masks: readonly (Uint8Array | undefined)[],
  ): void {
    const length = state.length;
    masks.forEach((mask, h) => {
      if (!mask) return;
      const store = state.heads[h];
      protectAnchors(store, mask, length, this.anchors);
      if (state.trace) {
        for (let i = 0; i < store.live; i++) {
          if (mask[i] === 0) state.trace.markEvicted(h, store.createdAtOf(i) - 1, length);
        }
      }
      store.retain(mask);
      this.accounting.setLive(layer, h, store.live);
    });
    this.accounting.countRound(layer);
  }
}
