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
 * The same while gradients are recorded: the tape keeps every layer's intermediates for the
 * backward pass (measured ≈ 18 per layer on wasm, forward and backward, rounded up).
 */
const RECORDED_SCORES_PER_LAYER = 20;

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
 * `4 · B · Hq · T · S` bytes of float32 scores per layer (`[B, Hq, T, S]`), times
 * `6 + 2 · layers` score-sized tensors alive at the worst moment, or `6 + 20 · layers` while
 * gradients are recorded (from measurements on the wasm backend, rounded up; they over-estimate
 * by 10–25 %).
 */
export function attentionBytes(extent: AttentionExtent, recording: boolean): number {
  const { batch, queryHeads, queries, keys, layers } = extent;
  const scores = 4 * batch * queryHeads * queries * keys;
  const perLayer = recording ? RECORDED_SCORES_PER_LAYER : RETAINED_SCORES_PER_LAYER;
  return scores * (WORKING_SCORES + perLayer * layers);
}

/**
 * Refuses, before anything is allocated, attention that would not fit the backend's tensor
 * memory: {@link attentionBytes} (recording or not, as tfjs is now) against
 * `tensorMemoryHeadroom()` from `@lethe/tensor` — on wasm, the 4 GiB heap less what live tensors
 * hold, whose overflow aborts the module (`table index is out of bounds`) and leaves the backend
 * unusable; no limit on the other backends.
 *
 * @param argument the input to name (`inputIds`, `prompts`, `tokens`).
 * @throws LetheError `E_SHAPE` naming `argument`, the message giving the sizes and the bytes.
 */
export function checkAttentionMemory(extent: AttentionExtent, argument: string): void {
  const headroom = tensorMemoryHeadroom();
  if (!Number.isFinite(headroom)) return;
  const recording = isRecordingGradients();
  const need = attentionBytes(extent, recording);
  if (need <= headroom) return;
  const { batch, queryHeads, queries, keys, layers } = extent;
  throw new LetheError(
    'E_SHAPE',
    `attention of ${queries} queries over ${keys} keys (batch ${batch}, ${queryHeads} query heads, ${layers} layers${recording ? ', recording gradients' : ''}) needs about ${gigabytes(need)} GB of tensor memory, more than the ${gigabytes(headroom)} GB the backend has left; use shorter sequences, a smaller batch or prefill in chunks${recording ? ' (training: fewer sequences per pass, e.g. micro-batches)' : ''}`,
    argument,
  );
}

function gigabytes(bytes: number): string {
  return (bytes / 1e9).toFixed(2);
}
