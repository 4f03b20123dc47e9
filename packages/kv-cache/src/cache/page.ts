/** What every slot of a page stores; fixed for the lifetime of a cache. */
export interface SlotLayout {
  /** Slots per page. */
  readonly pageSize: number;
  /** Floats per key (and per value). */
  readonly headDim: number;
  /** Whether slots hold a key vector (without them a page's `keys` is empty). */
  readonly storeKeys: boolean;
  /** Whether slots hold a value vector. */
  readonly storeValues: boolean;
  /** Whether slots hold a gate. */
  readonly storeGates: boolean;
  /** Whether slots hold accumulated attention and a count of the queries that saw them. */
  readonly trackAttention: boolean;
}

/**
 * One fixed-size block of `pageSize` slots of one (layer, KV head). Each field is a separate
 * typed array (structure of arrays) so a run of slots of one field is one contiguous range; all
 * of them are views of one buffer per page, keys and values adjacent, so reading a page's keys
 * and values (a sparse read's gather) streams through one block of memory.
 */
export class Page {
  /** Keys, `[pageSize, headDim]`; empty when the layout stores no keys. */
  readonly keys: Float32Array;
  /** Values, `[pageSize, headDim]`, when stored. */
  readonly values: Float32Array | undefined;
  /** Gates, `[pageSize]`, when stored. */
  readonly gates: Float32Array | undefined;
  /** Original token position of each slot. */
  readonly positions: Int32Array;
  /** Layer length right after the slot's token was appended (its stream index + 1). */
  readonly createdAt: Int32Array;
  /** Attention accumulated over every recorded query that saw the slot, when tracked. */
  readonly attention: Float64Array | undefined;
  /** Number of recorded queries (tokens) that saw the slot, when tracked. */
  readonly attentionCounts: Int32Array | undefined;

  /** The buffer every field is a view of. */
  private readonly storage: ArrayBuffer;

  constructor(layout: SlotLayout) {
    const { pageSize, headDim } = layout;
    const vector = pageSize * headDim;
    const storage = new ArrayBuffer(pageSize * slotByteLength(layout));
    this.storage = storage;
    // the float64 field first, so that every view starts aligned
    let at = 0;
    this.attention = layout.trackAttention ? new Float64Array(storage, at, pageSize) : undefined;
    at += this.attention?.byteLength ?? 0;
    this.keys = new Float32Array(storage, at, layout.storeKeys ? vector : 0);
    at += this.keys.byteLength;
    this.values = layout.storeValues ? new Float32Array(storage, at, vector) : undefined;
    at += this.values?.byteLength ?? 0;
    this.gates = layout.storeGates ? new Float32Array(storage, at, pageSize) : undefined;
    at += this.gates?.byteLength ?? 0;
    this.positions = new Int32Array(storage, at, pageSize);
    at += this.positions.byteLength;
    this.createdAt = new Int32Array(storage, at, pageSize);
    at += this.createdAt.byteLength;
    this.attentionCounts = layout.trackAttention
      ? new Int32Array(storage, at, pageSize)
      : undefined;
  }

  /** A deep copy of this page. */
  clone(layout: SlotLayout): Page {
    const copy = new Page(layout);
    new Uint8Array(copy.storage).set(new Uint8Array(this.storage));
    return copy;
  }
}

/** Bytes one slot of a page holds with this layout (all its fields). */
export function slotByteLength(layout: SlotLayout): number {
  const vector = layout.headDim * Float32Array.BYTES_PER_ELEMENT;
  let bytes = 2 * 4; // position, createdAt
  if (layout.storeKeys) bytes += vector;
  if (layout.storeValues) bytes += vector;
  if (layout.storeGates) bytes += 4;
  if (layout.trackAttention) bytes += Float64Array.BYTES_PER_ELEMENT + 4;
  return bytes;
}

/**
 * Bytes one page holds with this layout: its slots, plus, when it stores keys, its key bounds (the
 * channel-wise min and max of its keys, `2 · headDim` floats, kept by the head's `PageBounds`).
 */
export function pageByteLength(layout: SlotLayout): number {
  const bounds = layout.storeKeys ? 2 * layout.headDim * Float32Array.BYTES_PER_ELEMENT : 0;
  return layout.pageSize * slotByteLength(layout) + bounds;
}

/** Copies slot `from` of page `source` into slot `to` of page `target` (all fields). */
export function copySlot(
  source: Page,
  from: number,
  target: Page,
  to: number,
  headDim: number,
): void {
  const src = from * headDim;
  if (target.keys.length > 0)
    target.keys.set(source.keys.subarray(src, src + headDim), to * headDim);
  if (target.values) target.values.set(source.values!.subarray(src, src + headDim), to * headDim);
  if (target.gates) target.gates[to] = source.gates![from];
  target.positions[to] = source.positions[from];
  target.createdAt[to] = source.createdAt[from];
  if (target.attention) {
    target.attention[to] = source.attention![from];
    target.attentionCounts![to] = source.attentionCounts![from];
  }
}
