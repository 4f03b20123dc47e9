import { LetheError } from '@lethe/core';
import {
  type Anchors,
  attentionWeights,
  type CacheGeometry,
  type CacheStats,
  cacheGeometry,
  type GatherTarget,
  type KeepDecision,
  type KVCacheOptions,
  type KVCacheStore,
  type LayerObservation,
  type LayerView,
  type ObservationNeeds,
  type PageKeyBounds,
} from '@lethe/kv-cache';
import { causalAttention } from './causal-attention';

/** One live entry of one (layer, KV head): its own copies, no pages. */
interface Entry {
  readonly key: Float32Array;
  readonly value: Float32Array | undefined;
  readonly gate: number;
  readonly position: number;
  /** Tokens the layer held before this one. */
  readonly appendIndex: number;
  /** Accumulated attention (float64) and the number of query tokens that saw the entry. */
  attention: number;
  seenBy: number;
}

/** One recorded query token: all query heads, `[queryHeads, headDim]`. */
interface RecordedQuery {
  readonly query: Float32Array;
  readonly position: number;
}

/** Everything the cache holds for one layer. */
interface Layer {
  /** Live entries per KV head, oldest first; replaced by a filtered copy on every keep. */
  heads: Entry[][];
  /** Position of every token appended, in order. */
  readonly appended: number[];
  /** The newest recorded queries (at most `queryWindow`), oldest first. */
  recent: RecordedQuery[];
  lastQueryPosition: number;
}

/** Bytes an entry holds: key and value floats, gate, position, append index, attention, count. */
function entryBytes(headDim: number, storeValues: boolean): number {
  return (storeValues ? 2 : 1) * headDim * 4 + 4 + 4 + 4 + 8 + 4;
}

function float32(array: unknown, length: number, argument: string): Float32Array {
  if (!(array instanceof Float32Array))
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  if (array.length !== length) {
    throw new LetheError('E_SHAPE', `expected ${length} elements, got ${array.length}`, argument);
  }
  if (array.some((x) => !Number.isFinite(x)))
    throw new LetheError('E_ARG', 'non-finite value', argument);
  return array;
}

function int32(array: unknown, argument: string): Int32Array {
  if (!(array instanceof Int32Array))
    throw new LetheError('E_DTYPE', 'must be an Int32Array', argument);
  return array;
}

/** A keep mask over `live` entries from an index set; `E_ARG` naming `decision.keep` if bad. */
function keepMask(indices: unknown, live: number): boolean[] {
  if (!(indices instanceof Int32Array)) {
    throw new LetheError('E_ARG', 'must be an Int32Array of live-entry indices', 'decision.keep');
  }
  const mask = new Array<boolean>(live).fill(false);
  for (const index of indices) {
    if (index < 0 || index >= live || mask[index]) {
      throw new LetheError('E_ARG', `index ${index} is out of range or repeated`, 'decision.keep');
    }
    mask[index] = true;
  }
  return mask;
}

/**
 * A second, deliberately different implementation of the `KVCacheStore` contract, written from
 * its documentation for the model's tests: every (layer, KV head) is a plain array of entry
 * objects (each with its own key / value copies), rebuilt by filtering on every keep; `view()`
 * and `observe()` pack fresh arrays; `gather()` copies entry by entry; page key bounds are
 * recomputed from the entries on every call (nothing maintained); the query window is a list of copies; accumulated
 * attention is computed here ({@link causalAttention}, float64), the query window's with the
 * contract's float32 weights (`attentionWeights`). It keeps no
 * visibility trace (the contract has no replay masks) and ignores `options.trace`, so it truncates
 * whenever it does not track attention.
 */
export class UnpagedCache implements KVCacheStore {
  readonly geometry: CacheGeometry;
  readonly queryHeads: number;
  readonly anchors: Anchors;
  readonly storeValues: boolean;
  readonly storeGates: boolean;
  readonly queryWindow: number;
  readonly trackAttention: boolean;
  private readonly layers: Layer[];
  private readonly peakPerLayer: Int32Array;
  private peakTotal = 0;
  private readonly evictionRounds: Int32Array;

  constructor(options: KVCacheOptions) {
    this.geometry = cacheGeometry(options.geometry);
    this.queryHeads = options.queryHeads;
    const { kvHeads } = this.geometry;
    if (
      !(Number.isInteger(this.queryHeads) && this.queryHeads > 0 && this.queryHeads % kvHeads === 0)
    ) {
      throw new LetheError(
        'E_ARG',
        'must be a positive multiple of geometry.kvHeads',
        'queryHeads',
      );
    }
    this.anchors = options.anchors ?? { sinks: 0, window: 0 };
    this.storeValues = options.storeValues ?? true;
    this.storeGates = options.storeGates ?? false;
    this.queryWindow = options.queryWindow ?? 0;
    this.trackAttention = options.trackAttention ?? false;
    const { layers } = this.geometry;
    this.layers = Array.from({ length: layers }, () => ({
      heads: Array.from({ length: kvHeads }, () => []),
      appended: [],
      recent: [],
      lastQueryPosition: -1,
    }));
    this.peakPerLayer = new Int32Array(layers);
    this.evictionRounds = new Int32Array(layers);
  }

  length(layer: number): number {
    return this.layer(layer).appended.length;
  }

  liveCounts(layer: number): Int32Array {
    return Int32Array.from(this.layer(layer).heads, (entries) => entries.length);
  }

  append(
    layer: number,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates?: Float32Array,
  ): void {
    const state = this.layer(layer);
    const { kvHeads, headDim } = this.geometry;
    const tokens = int32(positions, 'positions').length;
    float32(keys, tokens * kvHeads * headDim, 'keys');
    if (this.storeValues) float32(values, tokens * kvHeads * headDim, 'values');
    if ((gates !== undefined) !== this.storeGates) {
      throw new LetheError('E_ARG', this.storeGates ? 'required' : 'not stored', 'gates');
    }
    if (gates !== undefined) float32(gates, tokens * kvHeads, 'gates');
    let previous = state.appended.at(-1) ?? -1;
    for (const position of positions) {
      if (position <= previous) throw new LetheError('E_ARG', 'must increase', 'positions');
      previous = position;
    }
    positions.forEach((position, t) => {
      state.heads.forEach((entries, h) => {
        const from = (t * kvHeads + h) * headDim;
        entries.push({
          key: keys.slice(from, from + headDim),
          value: this.storeValues ? values.slice(from, from + headDim) : undefined,
          gate: gates?.[t * kvHeads + h] ?? 0,
          position,
          appendIndex: state.appended.length + t,
          attention: 0,
          seenBy: 0,
        });
      });
    });
    state.appended.push(...positions);
    const live = this.liveOfLayer(layer);
    this.peakPerLayer[layer] = Math.max(this.peakPerLayer[layer]!, live);
    const total = this.layers.reduce((sum, _, l) => sum + this.liveOfLayer(l), 0);
    this.peakTotal = Math.max(this.peakTotal, total);
  }

  recordQueries(layer: number, queries: Float32Array, positions: Int32Array): void {
    const state = this.layer(layer);
    const { kvHeads, headDim } = this.geometry;
    const tokens = int32(positions, 'positions').length;
    const stride = this.queryHeads * headDim;
    float32(queries, tokens * stride, 'queries');
    const last = state.appended.slice(state.appended.length - tokens);
    if (last.length !== tokens || last.some((p, t) => p !== positions[t])) {
      throw new LetheError('E_ARG', 'must be the positions just appended', 'positions');
    }
    if (tokens > 0 && positions[0]! <= state.lastQueryPosition) {
      throw new LetheError('E_ARG', 'already recorded', 'positions');
    }
    const group = this.queryHeads / kvHeads;
    positions.forEach((position, t) => {
      if (this.trackAttention) {
        state.heads.forEach((entries, g) => {
          const sums: number[] = [];
          for (let q = g * group; q < (g + 1) * group; q++) {
            const row = causalAttention(
              entries,
              queries,
              (t * this.queryHeads + q) * headDim,
              position,
            );
            row.forEach((p, i) => {
              sums[i] = (sums[i] ?? 0) + p;
            });
          }
          sums.forEach((sum, i) => {
            entries[i]!.attention += sum;
            entries[i]!.seenBy += 1;
          });
        });
      }
      state.recent.push({ query: queries.slice(t * stride, (t + 1) * stride), position });
      state.lastQueryPosition = position;
    });
    state.recent = state.recent.slice(Math.max(0, state.recent.length - this.queryWindow));
  }

  view(layer: number): LayerView {
    const { heads } = this.layer(layer);
    const { kvHeads, headDim } = this.geometry;
    const maxLive = Math.max(0, ...heads.map((entries) => entries.length));
    const pack = <A extends Float32Array | Int32Array>(
      out: A,
      width: number,
      read: (entry: Entry) => ArrayLike<number>,
    ): A => {
      heads.forEach((entries, h) => {
        entries.forEach((entry, i) => out.set(read(entry), (h * maxLive + i) * width));
      });
      return out;
    };
    return {
      layer,
      kvHeads,
      headDim,
      maxLive,
      liveCounts: this.liveCounts(layer),
      positions: pack(new Int32Array(kvHeads * maxLive).fill(-1), 1, (e) => [e.position]),
      keys: pack(new Float32Array(kvHeads * maxLive * headDim), headDim, (e) => e.key),
      ...(this.storeValues
        ? { values: pack(new Float32Array(kvHeads * maxLive * headDim), headDim, (e) => e.value!) }
        : {}),
      ...(this.storeGates
        ? { gates: pack(new Float32Array(kvHeads * maxLive), 1, (e) => [e.gate]) }
        : {}),
    };
  }

  gather(
    layer: number,
    head: number,
    ranges: Int32Array,
    target: GatherTarget,
    offset: number,
  ): number {
    const entries = this.headEntries(layer, head);
    if (!(ranges instanceof Int32Array))
      throw new LetheError('E_DTYPE', 'not Int32Array', 'ranges');
    if (ranges.length % 2 !== 0) throw new LetheError('E_SHAPE', 'odd length', 'ranges');
    if (!(Number.isInteger(offset) && offset >= 0)) {
      throw new LetheError('E_ARG', 'must be a non-negative integer', 'offset');
    }
    const picked: Entry[] = [];
    let previous = 0;
    for (let r = 0; r < ranges.length; r += 2) {
      const [start, end] = [ranges[r]!, ranges[r + 1]!];
      if (start < previous || end < start || end > entries.length) {
        throw new LetheError('E_ARG', 'ranges must be sorted, disjoint, in the live set', 'ranges');
      }
      picked.push(...entries.slice(start, end));
      previous = end;
    }
    const { headDim } = this.geometry;
    const room = (array: Float32Array | undefined, width: number, name: string) => {
      if (array === undefined) return;
      if (!(array instanceof Float32Array))
        throw new LetheError('E_DTYPE', 'not Float32Array', name);
      if (array.length < (offset + picked.length) * width)
        throw new LetheError('E_SHAPE', 'short', name);
    };
    room(target.keys, headDim, 'target.keys');
    room(target.values, headDim, 'target.values');
    room(target.gates, 1, 'target.gates');
    if (target.values !== undefined && !this.storeValues)
      throw new LetheError('E_STATE', 'values not stored', 'target.values');
    if (target.gates !== undefined && !this.storeGates)
      throw new LetheError('E_STATE', 'gates not stored', 'target.gates');
    picked.forEach((entry, j) => {
      target.keys.set(entry.key, (offset + j) * headDim);
      target.values?.set(entry.value!, (offset + j) * headDim);
      if (target.gates) target.gates[offset + j] = entry.gate;
    });
    return picked.length;
  }

  pageKeyBounds(layer: number, head: number): PageKeyBounds {
    const entries = this.headEntries(layer, head);
    const { headDim, pageSize } = this.geometry;
    const pages = Math.ceil(entries.length / pageSize);
    const min = new Float32Array(pages * headDim);
    const max = new Float32Array(pages * headDim);
    for (let p = 0; p < pages; p++) {
      const page = entries.slice(p * pageSize, (p + 1) * pageSize);
      for (let c = 0; c < headDim; c++) {
        min[p * headDim + c] = Math.min(...page.map((entry) => entry.key[c]!));
        max[p * headDim + c] = Math.max(...page.map((entry) => entry.key[c]!));
      }
    }
    return { pages, min, max };
  }

  observe(layer: number, needs: ObservationNeeds, hidden?: Float32Array): LayerObservation {
    const state = this.layer(layer);
    if (typeof needs !== 'object' || needs === null) {
      throw new LetheError('E_ARG', 'must be an ObservationNeeds object', 'needs');
    }
    if (needs.attentionWindow > this.queryWindow) {
      throw new LetheError('E_STATE', 'more queries than kept', 'needs.attentionWindow');
    }
    if (needs.accumulatedAttention && !this.trackAttention) {
      throw new LetheError('E_STATE', 'attention not tracked', 'needs.accumulatedAttention');
    }
    if (needs.values && !this.storeValues) {
      throw new LetheError('E_STATE', 'values not stored', 'needs.values');
    }
    if (needs.hidden && hidden === undefined) {
      throw new LetheError('E_ARG', 'the policy needs the hidden state', 'hidden');
    }
    const view = this.view(layer);
    const { kvHeads, maxLive } = view;
    const step = state.appended.length;
    const perEntry = (read: (entry: Entry) => number): Float32Array => {
      const out = new Float32Array(kvHeads * maxLive);
      state.heads.forEach((entries, h) => {
        entries.forEach((entry, i) => {
          out[h * maxLive + i] = read(entry);
        });
      });
      return out;
    };
    const ages = new Int32Array(kvHeads * maxLive);
    state.heads.forEach((entries, h) => {
      entries.forEach((entry, i) => {
        ages[h * maxLive + i] = step - entry.appendIndex - 1;
      });
    });
    const window = Math.min(needs.attentionWindow, state.recent.length);
    const recent = state.recent.slice(state.recent.length - window);
    return {
      layer,
      kvHeads,
      queryHeads: this.queryHeads,
      headDim: this.geometry.headDim,
      step,
      liveCounts: view.liveCounts,
      maxLive,
      positions: view.positions,
      ages,
      window,
      ...(view.gates ? { gates: view.gates } : {}),
      ...(needs.keys ? { keys: view.keys } : {}),
      ...(needs.values ? { values: view.values! } : {}),
      ...(needs.attentionWindow > 0
        ? {
            queries: Float32Array.from(recent.flatMap(({ query }) => Array.from(query))),
            attention: this.windowAttention(state.heads, recent, maxLive),
          }
        : {}),
      ...(needs.accumulatedAttention
        ? {
            accumulatedAttention: perEntry((entry) => entry.attention),
            attentionCounts: perEntry((entry) => entry.seenBy),
          }
        : {}),
      ...(needs.pageKeyBounds ? { pageKeyBounds: this.observedBounds(layer, maxLive) } : {}),
      ...(hidden !== undefined ? { hidden } : {}),
    };
  }

  keep(layer: number, decision: KeepDecision): void {
    const state = this.layer(layer);
    if (typeof decision !== 'object' || decision === null) {
      throw new LetheError('E_ARG', 'must be a KeepDecision', 'decision');
    }
    let masks: boolean[][];
    if (decision.granularity === 'layer') {
      const first = state.heads[0]!.map((entry) => entry.position).join();
      if (state.heads.some((entries) => entries.map((entry) => entry.position).join() !== first)) {
        throw new LetheError('E_STATE', 'heads hold different live sets', 'decision.granularity');
      }
      masks = state.heads.map((entries) => keepMask(decision.keep, entries.length));
    } else if (decision.granularity === 'head') {
      if (!Array.isArray(decision.keep) || decision.keep.length !== state.heads.length) {
        throw new LetheError('E_SHAPE', 'needs one index set per KV head', 'decision.keep');
      }
      masks = state.heads.map((entries, h) => keepMask(decision.keep[h], entries.length));
    } else {
      throw new LetheError('E_ARG', "must be 'layer' or 'head'", 'decision.granularity');
    }
    const length = state.appended.length;
    state.heads = state.heads.map((entries, h) =>
      entries.filter((entry, i) => masks[h]![i] || this.isAnchor(entry, length)),
    );
    this.evictionRounds[layer]! += 1;
  }

  truncate(length: number): void {
    if (this.trackAttention) {
      throw new LetheError('E_STATE', 'attention sums include the forgotten queries', 'truncate');
    }
    const shortest = Math.min(...this.layers.map((state) => state.appended.length));
    if (!(Number.isInteger(length) && length >= 0 && length <= shortest)) {
      throw new LetheError('E_ARG', `must be an integer in [0, ${shortest}]`, 'length');
    }
    const needed = Math.min(this.anchors.window, length);
    for (const state of this.layers) {
      const window = (entries: Entry[]) =>
        entries.filter(
          (entry) => entry.appendIndex >= length - needed && entry.appendIndex < length,
        );
      if (state.heads.some((entries) => window(entries).length !== needed)) {
        throw new LetheError('E_STATE', 'a recent-window anchor would be evicted', 'truncate');
      }
    }
    for (const state of this.layers) {
      if (length === state.appended.length) continue;
      const cut = state.appended[length]!;
      state.heads = state.heads.map((entries) =>
        entries.filter((entry) => entry.appendIndex < length),
      );
      state.appended.length = length;
      state.recent = state.recent.filter((query) => query.position < cut);
      state.lastQueryPosition = Math.min(state.lastQueryPosition, state.appended.at(-1) ?? -1);
    }
  }

  stats(): CacheStats {
    const { layers, headDim } = this.geometry;
    const livePerHead = Int32Array.from(
      this.layers.flatMap((state) => state.heads.map((e) => e.length)),
    );
    const livePerLayer = Int32Array.from({ length: layers }, (_, l) => this.liveOfLayer(l));
    const liveTotal = livePerLayer.reduce((sum, live) => sum + live, 0);
    const bytes = liveTotal * entryBytes(headDim, this.storeValues);
    return {
      livePerLayer,
      livePerHead,
      peakPerLayer: this.peakPerLayer.slice(),
      liveTotal,
      peakTotal: this.peakTotal,
      bytesAllocated: bytes,
      bytesLive: bytes,
      pagesAllocated: 0,
      evictionRounds: this.evictionRounds.slice(),
    };
  }

  /**
   * Whether `keep` must keep `entry` whatever the decision, at layer length `length`: a sink
   * (position below `anchors.sinks`) or one of the last `anchors.window` tokens appended.
   */
  protected isAnchor(
    entry: { readonly position: number; readonly appendIndex: number },
    length: number,
  ): boolean {
    return entry.position < this.anchors.sinks || entry.appendIndex >= length - this.anchors.window;
  }

  private layer(layer: number): Layer {
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.geometry.layers)) {
      throw new LetheError('E_ARG', `must be an integer in [0, ${this.geometry.layers})`, 'layer');
    }
    return this.layers[layer]!;
  }

  private headEntries(layer: number, head: number): Entry[] {
    const { heads } = this.layer(layer);
    if (!(Number.isInteger(head) && head >= 0 && head < heads.length)) {
      throw new LetheError('E_ARG', `must be an integer in [0, ${heads.length})`, 'head');
    }
    return heads[head]!;
  }

  /** Every head's page bounds, `[kvHeads, maxPages, headDim]`, zero padding. */
  private observedBounds(layer: number, maxLive: number) {
    const { kvHeads, headDim, pageSize } = this.geometry;
    const maxPages = Math.ceil(maxLive / pageSize);
    const min = new Float32Array(kvHeads * maxPages * headDim);
    const max = new Float32Array(kvHeads * maxPages * headDim);
    for (let h = 0; h < kvHeads; h++) {
      const bounds = this.pageKeyBounds(layer, h);
      min.set(bounds.min, h * maxPages * headDim);
      max.set(bounds.max, h * maxPages * headDim);
    }
    return { pageSize, maxPages, min, max };
  }

  private liveOfLayer(layer: number): number {
    return this.layers[layer]!.heads.reduce((sum, entries) => sum + entries.length, 0);
  }

  /**
   * Causal attention of the recent queries over the live entries, `[window, queryHeads, maxLive]`,
   * with the contract's float32 arithmetic for it (`attentionWeights`).
   */
  private windowAttention(
    heads: readonly Entry[][],
    recent: readonly RecordedQuery[],
    maxLive: number,
  ): Float32Array {
    const { queryHeads } = this;
    const { kvHeads, headDim } = this.geometry;
    const out = new Float32Array(recent.length * queryHeads * maxLive);
    recent.forEach(({ query, position }, t) => {
      for (let q = 0; q < queryHeads; q++) {
        const seen = heads[Math.floor(q / (queryHeads / kvHeads))]!.filter(
          (entry) => entry.position <= position,
        );
        const keys = new Float32Array(seen.length * headDim);
        seen.forEach((entry, i) => keys.set(entry.key, i * headDim));
        const at = (t * queryHeads + q) * maxLive;
        attentionWeights(
          query.subarray(q * headDim, (q + 1) * headDim),
          keys,
          seen.length,
          headDim,
          out.subarray(at, at + seen.length),
        );
      }
    });
    return out;
  }
}
