import type { Anchors, CacheGeometry } from '../geometry';
import type { KeepDecision } from '../policy/eviction-policy';
import type { LayerObservation, ObservationNeeds } from '../policy/observation';
import type { PageKeyBounds } from '../read/page-key-bounds';
import type { CacheStats } from './accounting';
import type { LayerView } from './layer-view';

/**
 * Where {@link KVCacheStore.gather} copies entries: the `j`-th entry copied lands at
 * `keys[(offset + j)·headDim …]`, `values[(offset + j)·headDim …]` and `gates[offset + j]`.
 * Each array is written only where given.
 */
export interface GatherTarget {
  /** Keys after RoPE, `[≥ offset + count, headDim]`. */
  readonly keys: Float32Array;
  /** Values, `[≥ offset + count, headDim]`; requires a cache that stores values. */
  readonly values?: Float32Array;
  /** Gates, `[≥ offset + count]`; requires a cache that stores gates. */
  readonly gates?: Float32Array;
}

/**
 * The contract of a KV cache during inference: everything a runtime (`@lethe/model`'s decoder
 * and `GenerationSession`), an evaluation harness and a policy driver use of the cache of ONE
 * sequence. {@link KVCache} (paged, host memory) implements it; any other cache — device
 * resident, a foreign runtime's — can stand behind the same runtime by implementing it too.
 * Training-only operations (replay masks, cloning, serialisation) are not part of it.
 *
 * Terms used below. A layer holds, per KV head, a ragged *live set*: live entry `i` of head `h`
 * is the `i`-th oldest entry the head still holds (live entries are always in increasing token
 * position; that index is what a {@link KeepDecision} names). Every entry remembers its token
 * position, its key (after RoPE), value, optional gate and its *append index* (how many tokens
 * the layer held before it; its age at layer length `n` is `n − appendIndex − 1`, so the newest
 * token has age 0). "Causal attention of a query at position `p`" is the softmax, with scale
 * `1/√headDim` and logits and softmax computed in float64, of `q · k` over the live entries of
 * the query's KV head whose position is ≤ `p` (query head `q` reads KV head
 * `floor(q / (queryHeads / kvHeads))`); entries the query cannot see get 0. The attention an
 * observation's query window holds is the same softmax with the cache attention's float32
 * arithmetic instead (`attentionWeights`, exported: an implementation calls it to give the same
 * bits).
 *
 * Arrays handed to the cache (`append`, `recordQueries`, `keep`) may be views into the caller's
 * buffers that change after the call: an implementation copies what it keeps. Errors are
 * `LetheError`s with the codes below and the argument's name; `@lethe/model` validates its own
 * inputs before calling, so a runtime that is not Lethe's relies on them most.
 */
export interface KVCacheStore {
  /** Layers, KV heads, key/value width, and page size (the unit of `LayerControls.readPages` and Quest pages; an unpaged cache still reports the page size it was created with). */
  readonly geometry: CacheGeometry;
  /** Query heads per layer: a positive multiple of `geometry.kvHeads` (grouped-query attention). */
  readonly queryHeads: number;
  /**
   * Entries {@link KVCacheStore.keep} never evicts: per KV head, the live entries whose position
   * is below `anchors.sinks`, and those appended by the layer's last `anchors.window` tokens.
   */
  readonly anchors: Anchors;
  /** Whether values are stored (a runtime that attends over the cache requires it). */
  readonly storeValues: boolean;
  /** Whether one gate per entry and KV head is stored; then `append` requires gates. */
  readonly storeGates: boolean;
  /** How many of the most recently recorded queries per layer are kept for observations (≥ 0). */
  readonly queryWindow: number;
  /** Whether the attention every recorded query pays to each live entry is accumulated. */
  readonly trackAttention: boolean;

  /**
   * Tokens appended to `layer` so far, evicted ones included (all layers advance in lock-step
   * in a runtime; `length(0)` is the position the next token gets when positions start at 0).
   *
   * @throws `E_ARG` naming `layer` unless it is an integer in `[0, geometry.layers)`.
   */
  length(layer: number): number;

  /**
   * Live entries per KV head of `layer`, `[kvHeads]`: a fresh array the caller may keep.
   *
   * @throws `E_ARG` naming `layer` when out of range.
   */
  liveCounts(layer: number): Int32Array;

  /**
   * Appends `T = positions.length` tokens to one layer, as the newest live entry of every KV head.
   * Counts towards the peaks of {@link KVCacheStore.stats} (measured after every append).
   *
   * @param keys `[T, kvHeads, headDim]`, after RoPE.
   * @param values `[T, kvHeads, headDim]`; ignored (any length) when `storeValues` is false.
   * @param positions `[T]`, ≥ 0, strictly increasing and greater than every position appended to
   *   the layer before.
   * @param gates `[T, kvHeads]`; required exactly when `storeGates`.
   * @throws `E_DTYPE` (not a `Float32Array` / `Int32Array`), `E_SHAPE` (wrong length), `E_ARG`
   *   (layer out of range, bad positions, a NaN or ±∞ element, gates missing or unexpected),
   *   each naming the argument; nothing is appended then.
   */
  append(
    layer: number,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates?: Float32Array,
  ): void;

  /**
   * Records the queries of the `T` tokens just appended to `layer`. Keeps the newest
   * `queryWindow` of them for observations; with `trackAttention`, adds to every live entry a
   * query token sees the causal attention it pays it, summed over the query heads of the
   * entry's KV head group, and counts one more query for each such entry.
   *
   * @param queries `[T, queryHeads, headDim]`, after RoPE.
   * @param positions `[T]`: the positions of the last `T` appended tokens, each greater than
   *   every query position recorded before.
   * @throws `E_DTYPE`, `E_SHAPE` naming `queries`, `E_ARG` naming `positions` or `queries`
   *   (non-finite); nothing is recorded then.
   */
  recordQueries(layer: number, queries: Float32Array, positions: Int32Array): void;

  /**
   * Packed read of one layer for attention (the {@link LayerView} layout: `[kvHeads, maxLive]`
   * rows, `maxLive = max(liveCounts)`, padding: position −1, zeros elsewhere; `values` present iff
   * `storeValues`, `gates` iff `storeGates`). The arrays may be scratch buffers owned by the
   * cache: a caller reads them before the next mutation of the cache or the next `view()` of
   * the same layer and never writes to them.
   *
   * @throws `E_ARG` naming `layer` when out of range.
   */
  view(layer: number): LayerView;

  /**
   * Copies the keys (and values, gates, as `target` asks) of some live entries of one KV head
   * straight into the caller's buffers — the read of a sparse attention, which touches only the
   * entries it reads (no packed view of the layer first). Entries are copied in live order.
   *
   * @param ranges entry ranges: `[start₀, end₀, start₁, end₁, …]`, half-open live-index ranges,
   *   sorted and disjoint, inside `[0, live)`; `[0, live]` is the whole head.
   * @param offset the first entry slot of `target` written (a non-negative integer).
   * @returns the number of entries copied (the sum of the ranges' lengths).
   * @throws `E_ARG` naming `layer`, `head` or `offset` when out of range, `ranges` for a range
   *   that is reversed, unsorted, overlapping or past the live entries; `E_DTYPE` naming `ranges`
   *   (not an `Int32Array`) or the `target` field that is not a `Float32Array`; `E_SHAPE` naming
   *   `ranges` (odd length) or the `target` field too short for what is copied; `E_STATE` naming
   *   `target.values` / `target.gates` when the cache stores none. Nothing is written then.
   */
  gather(
    layer: number,
    head: number,
    ranges: Int32Array,
    target: GatherTarget,
    offset: number,
  ): number;

  /**
   * Quest's page metadata of one KV head, maintained by the cache as entries are appended and
   * evicted: for each page `p` of `geometry.pageSize` live entries (entries
   * `[p·pageSize, (p+1)·pageSize)`, the last one possibly partial), the channel-wise minimum and
   * maximum of its keys, `[pages, headDim]` with `pages = ceil(live / pageSize)`. Exactly the
   * min / max of the live keys at the time of the call (an eviction that moves entries between
   * pages updates them). The arrays may be views of the cache's own storage: a caller reads them
   * before the next mutation of the layer and never writes to them.
   *
   * @throws `E_ARG` naming `layer` or `head` when out of range.
   */
  pageKeyBounds(layer: number, head: number): PageKeyBounds;

  /**
   * Observation of one layer for a policy ({@link LayerObservation}; every array fresh, the
   * policy may keep it): `step = length(layer)`, live counts, positions and ages always; gates
   * when stored; `keys` / `values` when `needs` asks; when `needs.attentionWindow > 0`, the
   * newest `window = min(attentionWindow, queries recorded)` queries (oldest first) and their
   * causal attention over the current live entries, `[window, queryHeads, maxLive]` (both empty
   * when no query was recorded), each row's weights computed as `attentionWeights` computes
   * them (float32, the cache attention's arithmetic; not the float64 of the accumulated
   * attention); with `needs.accumulatedAttention`, the attention accumulated
   * by {@link KVCacheStore.recordQueries} and the counts, as float32; with `needs.pageKeyBounds`,
   * every head's {@link KVCacheStore.pageKeyBounds} packed into `pageKeyBounds`; `hidden` as
   * given (the same array).
   *
   * @throws `E_STATE` naming the need the cache cannot serve (`needs.attentionWindow` above
   *   `queryWindow`, `needs.accumulatedAttention` without `trackAttention`, `needs.values`
   *   without `storeValues`); `E_ARG` naming `hidden` when `needs.hidden` and none is given,
   *   `needs` when it is not an object, or `layer` when out of range.
   */
  observe(layer: number, needs: ObservationNeeds, hidden?: Float32Array): LayerObservation;

  /**
   * {@link KVCacheStore.observe} for a cache that computes observations where its entries live
   * (on a device) and must read them back: the same observation, asynchronously. A runtime calls
   * it when present (Lethe's eviction rounds do) and `observe` otherwise; a cache whose `observe`
   * cannot serve some needs synchronously throws `E_STATE` naming `observe` there and serves
   * them here. Optional: host caches leave it out.
   *
   * @throws what `observe` throws (the promise rejects).
   */
  observeAsync?(
    layer: number,
    needs: ObservationNeeds,
    hidden?: Float32Array,
  ): Promise<LayerObservation>;

  /**
   * One permanent eviction round of `layer`: per KV head, keeps the live entries `decision`
   * lists (indices into the live entries, any order) plus the anchors, evicts the rest, and
   * counts one round in `stats().evictionRounds`. Survivors keep their order, keys, values,
   * gates, accumulated attention and counts. A `'layer'` decision applies one index set to every
   * head; a `'head'` decision gives one set per KV head.
   *
   * @throws `E_ARG` naming `decision.keep` for a non-integer, out-of-range or repeated index,
   *   `decision.granularity` for an unknown granularity, `decision` when not an object;
   *   `E_SHAPE` naming `decision.keep` when a `'head'` decision has not one set per KV head;
   *   `E_STATE` naming `decision.granularity` for a `'layer'` decision while the heads hold
   *   different live sets. Nothing is evicted when it throws.
   */
  keep(layer: number, decision: KeepDecision): void;

  /**
   * Forgets, in every layer, the tokens appended after the first `length`, as if they had never
   * been appended: every entry of theirs (live or evicted) in every KV head, and the recorded
   * queries at their positions. `length(layer)` becomes `length` in every layer, so the next
   * append continues from there (a runtime whose positions are append indices, like
   * `@lethe/model`'s, gives the next token position `length`; it removes exactly the entries at
   * positions ≥ `length`). Everything about the kept tokens stays as it was: their live entries
   * (keys, values, gates, positions, ages), evictions already made, and {@link
   * KVCacheStore.pageKeyBounds}, which equal the min / max of the remaining live keys. Of
   * {@link KVCacheStore.stats}, the live counts (and bytes) fall accordingly while the peaks and
   * `evictionRounds` stay as they were (they are history). The query window drops the queries
   * at forgotten positions (older ones it had already discarded do not come back), and queries
   * of re-appended tokens may be recorded again. `@lethe/model`'s `GenerationSession` uses it to
   * recompute the last tokens' entries densely (SOL's KV refresh, `ComputePolicy.refreshEvery`).
   *
   * @throws `E_STATE` naming `truncate` when the cache cannot forget honestly — it tracks
   *   attention (`trackAttention`: the accumulated sums include what the forgotten queries paid)
   *   or keeps other history of the forgotten tokens (`KVCache`'s visibility trace), when one
   *   of the last `anchors.window` tokens before `length` was evicted (they would become the
   *   recent-window anchors, which {@link KVCacheStore.keep} guarantees live), or when the
   *   implementation cannot truncate at all; `E_ARG` naming `length` unless it is an integer in
   *   `[0, length(layer)]` for every layer. Nothing changes when it throws.
   */
  truncate(length: number): void;

  /**
   * Occupancy snapshot with fresh arrays ({@link CacheStats}). Entry counts are exact and the
   * same for every implementation given the same calls: `livePerHead`, `livePerLayer`,
   * `liveTotal`, the peaks (maxima measured after every `append`) and `evictionRounds`. The byte
   * and page figures describe what this implementation holds (an unpaged cache reports its own
   * bytes and 0 pages).
   */
  stats(): CacheStats;
}
