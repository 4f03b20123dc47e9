import { ranksBefore } from '@lethe/kv-cache';
import type { MaskHook } from '@lethe/model';
import { tf } from '@lethe/tensor';
import { evictionBoundaries } from './eviction-boundaries';

/** The anchors of the caches that eviction in the loop applies (GSA's policy's). */
export interface EvictionAnchors {
  /** Entries at positions below it are always kept. */
  readonly sinks: number;
  /** The most recent entries always kept (the query's own included). */
  readonly window: number;
}

/**
 * Which entries each query row of a batch still sees when every sequence's cache evicts by the
 * gate at its own budget, as GSA's budgeted cache does at inference: per sequence `b`, head `o`,
 * query row `t` and key `j ≤ t`, 1 when the entry is held — a sink, in the recent window, or among
 * the `⌊budgets[b] · n_b⌋ − sinks − window` evictable entries of highest score
 * (`evictionBoundaries`, ties to the older entry), `n_b` the sequence's real length — else 0.
 * Rows and keys past `n_b` (padding) and keys after the row are 1: the causal mask and the loss
 * mask deal with them. A sequence whose budget leaves no gate-selected slot (or keeps everything)
 * is not evicted.
 *
 * @param scores `[B, outputs, T]` gate scores by head (row-major), `outputs` 1 (shared by the
 *   KV heads) or one per KV head.
 * @param lengths real tokens of each sequence (from position 0).
 * @param budgets each sequence's kept fraction of its real length, in (0, 1].
 * @returns `[B, outputs, T, T]` visibility.
 */
export function evictionVisibility(
  scores: Float32Array,
  lengths: readonly number[],
  budgets: readonly number[],
  shape: { readonly outputs: number; readonly length: number },
  anchors: EvictionAnchors,
): Float32Array {
  const { outputs, length } = shape;
  const visible = new Float32Array(lengths.length * outputs * length * length).fill(1);
  lengths.forEach((n, b) => {
    const selected = Math.floor(budgets[b]! * n) - anchors.sinks - anchors.window;
    if (selected < 1) return;
    for (let o = 0; o < outputs; o++) {
      const offset = (b * outputs + o) * length;
      const boundaries = evictionBoundaries(scores, n, { ...anchors, selected }, offset);
      for (let t = 0; t < n; t++) {
        const boundary = boundaries[t]!;
        if (boundary < 0) continue;
        const row = (offset + t) * length;
        for (let j = anchors.sinks; j <= t - anchors.window; j++) {
          const held = j === boundary || ranksBefore(scores, offset + j, offset + boundary);
          if (!held) visible[row + j] = 0;
        }
      }
    }
  });
  return visible;
}

/**
 * The forward's {@link MaskHook} of eviction in the loop: each layer's gate scores of its own
 * attention input (the order the runtime ranks by) hide from every query row what the sequence's
 * cache would have evicted by then ({@link evictionVisibility}).
 *
 * @param logitsOf the gate's logits `[B, T, outputs]` of a layer's input (`gate.logits`, or a
 *   memo of it the caller shares with the key bias); the hook reads them and leaves them alone.
 * @param real `[B, T]`, 1 at the real tokens (`NextTokenBatch.inputMask`, from position 0).
 * @param budgets each sequence's kept fraction.
 */
export function evictionMaskHook(
  logitsOf: (layer: number, attentionInput: tf.Tensor) => tf.Tensor3D,
  real: tf.Tensor2D,
  budgets: readonly number[],
  anchors: EvictionAnchors,
): MaskHook {
  const [batch, length] = real.shape;
  const values = real.dataSync();
  const lengths = Array.from({ length: batch }, (_, b) => {
    let n = 0;
    for (let t = 0; t < length; t++) if (values[b * length + t]! > 0) n++;
    return n;
  });
  return (layer, attentionInput) => {
    const byHead = tf.transpose(logitsOf(layer, attentionInput), [0, 2, 1]);
    const outputs = byHead.shape[1]!;
    const scores = byHead.dataSync() as Float32Array;
    byHead.dispose();
    const visible = evictionVisibility(scores, lengths, budgets, { outputs, length }, anchors);
    return tf.tensor4d(visible, [batch, outputs, length, length]);
  };
}
