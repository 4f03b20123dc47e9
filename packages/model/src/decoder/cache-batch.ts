import type { KVCacheStore, LayerControls } from '@lethe/kv-cache';
import { assertNoNaN, LetheError, tf } from '@lethe/tensor';
import { HIDDEN_LOGIT } from './masks';
import type { SequenceRead } from './read-plan';

/** The cached entries one layer's new tokens read, for a batch, padded to the longest read `S`. */
export interface CachedLayerBatch {
  /** Keys after RoPE `[B, Hkv, S, headDim]`: only the entries read, zero padding. */
  readonly keys: tf.Tensor;
  /** Values `[B, Hkv, S, headDim]`: only the entries read, zero padding. */
  readonly values: tf.Tensor;
  /**
   * Additive logit bias `[B, Hkv, S]`: {@link HIDDEN_LOGIT} for padding, plus `attentionBias`,
   * plus `log(gate)` of the entries of caches that store gates (0 for the others).
   */
  readonly logitBias: tf.Tensor;
}

/**
 * Builds the batch tensors of one layer's cached reads: for each (sequence, KV head) row, only
 * the entries `reads` lists, copied straight from the cache's storage (`KVCacheStore.gather`,
 * one copy per page run; no packed view of the layer), in live order, then padding up to the
 * longest read of the batch. A restricted read therefore costs attention work in proportion to
 * what it reads. `attentionBias` `[Hkv, maxLive]` (over the live entries before the step,
 * `maxLive = max(liveCounts)`) follows the entries it belongs to, and so does the gate of every
 * entry of a cache that stores gates.
 *
 * Must run before the caches are mutated.
 *
 * @param reads what each sequence reads ({@link planLayerReads}).
 * @param controls this layer's controls per sequence (entries may be undefined).
 * @returns undefined when no sequence reads any cached entry.
 * @throws LetheError `E_SHAPE` / `E_DTYPE` / `E_ARG` naming `controls[b][layer].attentionBias`.
 */
export function batchCachedLayer(
  caches: readonly KVCacheStore[],
  layer: number,
  reads: readonly SequenceRead[],
  controls: readonly (LayerControls | undefined)[] | undefined,
): CachedLayerBatch | undefined {
  const width = Math.max(...reads.map((read) => Math.max(0, ...read.counts)));
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
  const gates = caches.some((cache) => cache.storeGates)
    ? new Float32Array(rows * width).fill(1)
    : undefined;
  reads.forEach(({ live, ranges }, b) => {
    const cache = caches[b]!;
    const bias = controls?.[b]?.attentionBias;
    const maxLive = Math.max(0, ...live);
    if (bias !== undefined) checkAttentionBias(bias, kvHeads, maxLive, `controls[${b}][${layer}]`);
    for (let h = 0; h < kvHeads; h++) {
      const read = ranges[h] ?? Int32Array.of(0, live[h]!);
      const to = (b * kvHeads + h) * width;
      const target = { keys, values, ...(cache.storeGates ? { gates } : {}) };
      const count = cache.gather(layer, h, read, target, to);
      visible.fill(0, to, to + count);
      if (bias !== undefined) {
        let at = to;
        for (let r = 0; r < read.length; r += 2) {
          const start = h * maxLive + read[r]!;
          const end = h * maxLive + read[r + 1]!;
          extra!.set(bias.subarray(start, end), at);
          at += end - start;
        }
      }
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

function checkAttentionBias(
  bias: Float32Array,
  kvHeads: number,
  maxLive: number,
  owner: string,
): void {
  const argument = `${owner}.attentionBias`;
  if (!(bias instanceof Float32Array))
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  if (bias.length !== kvHeads * maxLive) {
    throw new LetheError(
      'E_SHAPE',
      `expected [kvHeads, maxLive] = ${kvHeads * maxLive} entries, got ${bias.length}`,
      argument,
    );
  }
  assertNoNaN(bias, argument);
}
