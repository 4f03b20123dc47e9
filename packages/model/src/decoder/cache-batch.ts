import type { KVCacheStore, LayerControls, LayerView } from '@lethe/kv-cache';
import { assertNoNaN, LetheError, tf } from '@lethe/tensor';
import { HIDDEN_LOGIT } from './masks';
import { checkReadPages, openPages } from './read-pages';

/** The cached entries of one layer for a batch of sequences, padded to the longest live set `S`. */
export interface CachedLayerBatch {
  /** Keys after RoPE `[B, Hkv, S, headDim]`, zero padding. */
  readonly keys: tf.Tensor;
  /** Values `[B, Hkv, S, headDim]`, zero padding. */
  readonly values: tf.Tensor;
  /**
   * Additive logit bias `[B, Hkv, S]`: {@link HIDDEN_LOGIT} for padding and for entries outside
   * the pages read (`readPages`, a read selector's pages), plus `attentionBias`, plus `log(gate)` when gates are used.
   */
  readonly logitBias: tf.Tensor;
}

/**
 * Packs the live entries of `layer` of every cache into batch tensors, one host copy per
 * (sequence, KV head) row, and applies each sequence's attention controls:
 * `readPages` (page `p` of head `h` = live entries `[p·pageSize, (p+1)·pageSize)`) restricts
 * what the new tokens read; `attentionBias` `[Hkv, maxLive]` (the layout of this view) is added
 * to the logits of every query head of the group. Pages chosen by a read selector restrict the
 * read the same way; with both, only pages in both lists are read (the intersection).
 *
 * Must run before the caches are mutated (the views are scratch buffers).
 *
 * @param controls this layer's controls per sequence (entries may be undefined).
 * @param useGates add `log(gate)` of each stored entry.
 * @param selected pages per sequence from a read selector (undefined entries: no restriction).
 * @returns undefined when every cache is empty at this layer.
 * @throws LetheError `E_SHAPE` / `E_DTYPE` / `E_ARG` naming the bad control or `readSelector`.
 */
export function batchCachedLayer(
  caches: readonly KVCacheStore[],
  layer: number,
  controls: readonly (LayerControls | undefined)[] | undefined,
  useGates: boolean,
  selected?: readonly (readonly Int32Array[] | undefined)[],
): CachedLayerBatch | undefined {
  const views = caches.map((cache) => cache.view(layer));
  const width = Math.max(...views.map((view) => view.maxLive));
  if (width === 0) return undefined;
  const batch = caches.length;
  const { kvHeads, headDim } = caches[0]!.geometry;
  const rows = batch * kvHeads;
  const keys = new Float32Array(rows * width * headDim);
  const values = new Float32Array(rows * width * headDim);
  const visible = new Float32Array(rows * width).fill(HIDDEN_LOGIT);
  const extra = controls?.some((c) => c?.attentionBias !== undefined)
    ? new Float32Array(rows * width)
    : undefined;
  const gates = useGates ? new Float32Array(rows * width).fill(1) : undefined;
  views.forEach((view, b) => {
    const control = controls?.[b];
    const bias = control?.attentionBias;
    if (bias !== undefined) checkAttentionBias(bias, view, b);
    const pageSize = caches[b]!.geometry.pageSize;
    const pageLists = pageRestrictions(control?.readPages, selected?.[b], view, pageSize, b);
    for (let h = 0; h < kvHeads; h++) {
      const live = view.liveCounts[h]!;
      const from = h * view.maxLive;
      const to = (b * kvHeads + h) * width;
      keys.set(view.keys.subarray(from * headDim, (from + live) * headDim), to * headDim);
      values.set(view.values!.subarray(from * headDim, (from + live) * headDim), to * headDim);
      if (pageLists.length === 0) visible.fill(0, to, to + live);
      else
        openPages(
          visible,
          to,
          live,
          pageLists.map((pages) => pages[h]!),
          pageSize,
        );
      if (bias !== undefined) extra!.set(bias.subarray(from, from + live), to);
      if (gates !== undefined) gates.set(view.gates!.subarray(from, from + live), to);
    }
  });
  return tf.tidy(() => {
    let logitBias = tf.tensor3d(visible, [batch, kvHeads, width]);
    if (extra !== undefined)
      logitBias = tf.add(logitBias, tf.tensor3d(extra, [batch, kvHeads, width]));
    if (gates !== undefined) {
      logitBias = tf.add(logitBias, tf.log(tf.tensor3d(gates, [batch, kvHeads, width])));
    }
    return {
      keys: tf.tensor4d(keys, [batch, kvHeads, width, headDim]),
      values: tf.tensor4d(values, [batch, kvHeads, width, headDim]),
      logitBias,
    };
  });
}

function checkAttentionBias(bias: Float32Array, view: LayerView, b: number): void {
  const argument = `controls[${b}][${view.layer}].attentionBias`;
  if (!(bias instanceof Float32Array))
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  if (bias.length !== view.kvHeads * view.maxLive) {
    throw new LetheError(
      'E_SHAPE',
      `expected [kvHeads, maxLive] = ${view.kvHeads * view.maxLive} entries, got ${bias.length}`,
      argument,
    );
  }
  assertNoNaN(bias, argument);
}

/** The checked page restrictions of one sequence: its `readPages` control and its selected pages. */
function pageRestrictions(
  readPages: readonly Int32Array[] | undefined,
  selected: readonly Int32Array[] | undefined,
  view: LayerView,
  pageSize: number,
  b: number,
): (readonly Int32Array[])[] {
  const lists: (readonly Int32Array[])[] = [];
  if (readPages !== undefined) {
    checkReadPages(readPages, view, pageSize, `controls[${b}][${view.layer}].readPages`);
    lists.push(readPages);
  }
  if (selected !== undefined) {
    checkReadPages(selected, view, pageSize, `readSelector.selectPages[${b}][${view.layer}]`);
    lists.push(selected);
  }
  return lists;
}
