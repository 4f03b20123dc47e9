import { LetheError } from '@lethe/core';
import { isRecordingGradients, tensorMemoryHeadroom } from '@lethe/tensor';

/**
 * Score-sized tensors one layer's attention holds at once while it runs (raw, scaled and biased
 * logits, the softmax's temporaries, the probabilities, the per-head products of
 * `batchMatMul`), plus the causal mask and bias: measured on wasm as the heap's growth over a
 * forward, 5–6 scores, rounded up.
 */
const WORKING_SCORES = 6;

/**
 * Score-sized tensors each layer leaves alive until the forward returns (its probabilities and
 * mask biases; measured ≈ 1.6 per layer on wasm, rounded up).
 */
const RETAINED_SCORES_PER_LAYER = 2;

/**
 * The same while gradients are recorded and the probabilities captured (`capture.attention`):
 * the tape keeps every layer's intermediates for the backward pass (measured ≈ 18 per layer on
 * wasm, forward and backward, rounded up).
 */
const TAPED_SCORES_PER_LAYER = 20;

/**
 * Score-sized tensors alive at the worst moment of a recorded forward and backward whose
 * attention recomputes its probabilities in the backward pass (`attentionOutput`): one layer's
 * backward working set (probabilities, their gradient, the logits' gradient) or a forward's, the
 * causal bias, and what each layer leaves on the tape (the copy of its bias tfjs saves, and
 * activations linear in T that count as about one score each at a thousand tokens). Measured on
 * wasm at 1,400 tokens of the suite models' shape: the engine's peak 8.1, 12.1 and 18.1 scores at
 * 1, 3 and 6 layers, the heap's growth 7.9, 14.1 and 20.5, with the attention whole (as masks
 * and key biases keep it); counted as `9 + 2 · layers`. Under the causal mask alone it runs in
 * blocks (`causalAttentionOutput`) and needs less — 2.4, 5.6 and 10.9 at 2,048 tokens — which the
 * same count covers.
 */
const RECOMPUTED_WORKING_SCORES = 9;
const RECOMPUTED_SCORES_PER_LAYER = 2;

/**
 * How a forward's attention holds memory: `inference` (no gradients recorded), `recomputed`
 * (gradients recorded, each layer's probabilities recomputed in the backward pass) or `taped`
 * (gradients recorded with the probabilities captured, the tape holding every layer's
 * intermediates).
 */
export type AttentionMemoryMode = 'inference' | 'recomputed' | 'taped';

/** The sizes that decide how much memory attention needs. */
export interface AttentionExtent {
  /** Sequences in the batch. */
  readonly batch: number;
  /** Query heads per layer. */
  readonly queryHeads: number;
  /** Query tokens per sequence (`T`). */
  readonly queries: number;
  /** Keys each query is scored against (`S`: `T` in a forward, cached entries + `T` in a step). */
  readonly keys: number;
  /** Decoder layers. */
  readonly layers: number;
}

/**
 * Estimated peak bytes of tensor memory the attention of a forward pass (or cached step) takes:
 * `4 · B · Hq · T · S` bytes of float32 scores per layer (`[B, Hq, T, S]`), times the
 * score-sized tensors alive at the worst moment — `6 + 2 · layers` for inference,
 * `9 + 2 · layers` while gradients are recorded through recomputed attention, `6 + 20 · layers`
 * while they are recorded with the probabilities captured (from measurements on the wasm backend,
 * rounded up; they over-estimate by 10–25 %).
 */
export function attentionBytes(extent: AttentionExtent, mode: AttentionMemoryMode): number {
  const { batch, queryHeads, queries, keys, layers } = extent;
  const scores = 4 * batch * queryHeads * queries * keys;
  if (mode === 'recomputed') {
    return scores * (RECOMPUTED_WORKING_SCORES + RECOMPUTED_SCORES_PER_LAYER * layers);
  }
  const perLayer = mode === 'taped' ? TAPED_SCORES_PER_LAYER : RETAINED_SCORES_PER_LAYER;
  return scores * (WORKING_SCORES + perLayer * layers);
}

/**
 * Refuses, before anything is allocated, attention that would not fit the backend's tensor
 * memory: {@link attentionBytes} (recording or not, as tfjs is now; recomputed unless the
 * probabilities are captured) against
 * `tensorMemoryHeadroom()` from `@lethe/tensor` — on wasm, the 4 GiB heap less what live tensors
 * hold, whose overflow aborts the module (`table index is out of bounds`) and leaves the backend
 * unusable; no limit on the other backends.
 *
 * @param argument the input to name (`inputIds`, `prompts`, `tokens`).
 * @param capturesProbabilities whether the forward returns its attention probabilities (and so
 *   keeps them on the tape while recording).
 * @throws LetheError `E_SHAPE` naming `argument`, the message giving the sizes and the bytes.
 */
export function checkAttentionMemory(
  extent: AttentionExtent,
  argument: string,
  capturesProbabilities = false,
): void {
  const headroom = tensorMemoryHeadroom();
  if (!Number.isFinite(headroom)) return;
  const recording = isRecordingGradients();
  const mode = !recording ? 'inference' : capturesProbabilities ? 'taped' : 'recomputed';
  const need = attentionBytes(extent, mode);
  if (need <= headroom) return;
  const { batch, queryHeads, queries, keys, layers } = extent;
  throw new LetheError(
    'E_SHAPE',
    `attention of ${queries} queries over ${keys} keys (batch ${batch}, ${queryHeads} query heads, ${layers} layers${recording ? `, recording gradients${capturesProbabilities ? ' with the probabilities captured' : ''}` : ''}) needs about ${gigabytes(need)} GB of tensor memory, more than the ${gigabytes(headroom)} GB the backend has left; use shorter sequences, a smaller batch or prefill in chunks${recording ? ` (training: fewer sequences per pass, e.g. micro-batches${capturesProbabilities ? ', or no captured attention' : ''})` : ''}`,
    argument,
  );
}

function gigabytes(bytes: number): string {
  return (bytes / 1e9).toFixed(2);
}
