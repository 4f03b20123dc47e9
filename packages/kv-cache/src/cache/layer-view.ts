import type { HeadStore } from './head-store';
import type { SlotLayout } from './page';

/**
 * Packed read of one layer for the attention of the next token(s). Per-entry arrays are laid
 * out `[kvHeads, maxLive]` (vectors `[kvHeads, maxLive, headDim]`); entries past
 * `liveCounts[h]` are padding (position -1, zeros elsewhere). The arrays are views into scratch
 * buffers owned by the cache: valid until the next mutation of the cache, and overwritten by
 * the next `view()` of the same layer.
 */
export interface LayerView {
  /** Layer index. */
  readonly layer: number;
  /** Number of KV heads. */
  readonly kvHeads: number;
  /** Key/value vector width. */
  readonly headDim: number;
  /** Row stride: `max(liveCounts)`. */
  readonly maxLive: number;
  /** Live entries per KV head, `[kvHeads]`. */
  readonly liveCounts: Int32Array;
  /** Token positions, `[kvHeads, maxLive]`, -1 for padding. */
  readonly positions: Int32Array;
  /** Keys after RoPE, `[kvHeads, maxLive, headDim]`, zero padding. */
  readonly keys: Float32Array;
  /** Values, `[kvHeads, maxLive, headDim]`, zero padding; absent when the cache stores none. */
  readonly values?: Float32Array;
  /** Gates, `[kvHeads, maxLive]`, zero padding; present when the cache stores gates. */
  readonly gates?: Float32Array;
}

/** Returns `buffer` when it holds `needed` elements without being far too large, else a new one. */
function fit<A extends Float32Array | Int32Array>(
  buffer: A,
  needed: number,
  make: (length: number) => A,
): A {
  if (buffer.length >= needed && buffer.length <= 2 * needed) return buffer;
  return make(Math.ceil(needed * 1.25));
}

/**
 * Reusable buffers that {@link packLayerView} packs one layer into. They grow geometrically and
 * shrink when the layer shrinks to less than half of them, so a steady decode loop allocates
 * nothing.
 */
export class ViewScratch {
  private keys = new Float32Array(0);
  private values = new Float32Array(0);
  private gates = new Float32Array(0);
  private positions = new Int32Array(0);
  private liveCounts = new Int32Array(0);

  /** Packs `heads` into the scratch buffers and returns views of them. */
  pack(layer: number, heads: readonly HeadStore[], layout: SlotLayout): LayerView {
    const kvHeads = heads.length;
    const { headDim } = layout;
    let maxLive = 0;
    for (const store of heads) maxLive = Math.max(maxLive, store.live);
    const vectorLength = kvHeads * maxLive * headDim;
    const scalarLength = kvHeads * maxLive;
    this.keys = fit(this.keys, vectorLength, (n) => new Float32Array(n));
    this.positions = fit(this.positions, scalarLength, (n) => new Int32Array(n));
    if (this.liveCounts.length !== kvHeads) this.liveCounts = new Int32Array(kvHeads);
    if (layout.storeValues)
      this.values = fit(this.values, vectorLength, (n) => new Float32Array(n));
    if (layout.storeGates) this.gates = fit(this.gates, scalarLength, (n) => new Float32Array(n));

    for (let h = 0; h < kvHeads; h++) {
      const store = heads[h];
      const live = store.live;
      this.liveCounts[h] = live;
      const row = h * maxLive;
      store.copyField((page) => page.keys, headDim, this.keys, row * headDim);
      this.keys.fill(0, (row + live) * headDim, (row + maxLive) * headDim);
      store.copyField((page) => page.positions, 1, this.positions, row);
      this.positions.fill(-1, row + live, row + maxLive);
      if (layout.storeValues) {
        store.copyField((page) => page.values!, headDim, this.values, row * headDim);
        this.values.fill(0, (row + live) * headDim, (row + maxLive) * headDim);
      }
      if (layout.storeGates) {
        store.copyField((page) => page.gates!, 1, this.gates, row);
        this.gates.fill(0, row + live, row + maxLive);
      }
    }
    return {
      layer,
      kvHeads,
      headDim,
      maxLive,
      liveCounts: this.liveCounts,
      positions: this.positions.subarray(0, scalarLength),
      keys: this.keys.subarray(0, vectorLength),
      ...(layout.storeValues ? { values: this.values.subarray(0, vectorLength) } : {}),
      ...(layout.storeGates ? { gates: this.gates.subarray(0, scalarLength) } : {}),
    };
  }
}
