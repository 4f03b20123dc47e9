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
 * the tape keeps every layer's intermediates for the backward pass, a mask's logit bias among
 * them. Measured on wasm (the engine's peak over a forward and backward with per-layer masks, as
 * NGC's replay runs them, 800 tokens of the suite models' shape, vocabulary 64): 31.4, 84.4 and
 * 163.9 scores at 1, 3 and 6 layers, of which the per-token term below is 2.2, 6.0 and 11.7;
 * counted as `7 + 26 · layers` (7–13 % over the rest). An earlier count, `6 + 20 · layers`
 * without the per-token term, let a replay of 16 rollouts of 480 tokens through, and the heap
 * overflowed; `8 + 28 · layers` refused 4 rollouts of 820 tokens, which an NGC run had replayed
 * 120 updates long.
 */
const TAPED_WORKING_SCORES = 7;
const TAPED_SCORES_PER_LAYER = 26;

/**
 * Score-sized tensors alive at the worst moment of a recorded forward and backward whose
 * attention recomputes its probabilities in the backward pass (`attentionOutput`): one layer's
 * backward working set (probabilities, their gradient, the logits' gradient) or a forward's, and
 * what each layer leaves on the tape (the copy of its mask bias or key bias tfjs saves). Measured
 * on wasm with per-layer masks at 800 tokens (vocabulary 64): 9.5, 17.8 and 30.3 scores at 1, 3
 * and 6 layers, of which the per-token term below is 2.2, 6.0 and 11.7 (with key biases at 1,400
 * tokens the heap grew by 7.9, 14.1 and 20.5 in all); counted as `6 + 3 · layers`. Under the
 * causal mask alone it runs in blocks (`causalAttentionOutput`) and needs less — 2.4, 5.6 and
 * 10.9 at 2,048 tokens — which the same count covers with room.
 */
const RECOMPUTED_WORKING_SCORES = 6;
const RECOMPUTED_SCORES_PER_LAYER = 3;

/**
 * Floats per token a recorded forward and backward holds besides its attention: the logits and
 * their log-softmax, gradients and temporaries (about 10 vocabulary-wide rows), and each layer's
 * activations on the tape with their gradients (about 24 rows of `hidden + intermediate`):
 * measured on wasm as 22–26 k floats a token at 3 layers, vocabulary 771, hidden 64 and MLP
 * 128 (16 sequences of 200 tokens against one of 800); counted as `12 · vocab + 32 · layers ·
 * (hidden + intermediate)`. At 200 tokens it is a quarter of the need.
 */
const RECORDED_VOCAB_ROWS = 12;
const RECORDED_WIDTH_ROWS_PER_LAYER = 32;

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
  /** Vocabulary size (the logits' width). */
  readonly vocab: number;
  /** Residual width (`hidden_size`). */
  readonly hidden: number;
  /** MLP width (`intermediate_size`). */
  readonly intermediate: number;
}

/**
 * Estimated peak bytes of tensor memory a forward pass (or cached step) takes for its attention:
 * `4 · B · Hq · T · S` bytes of float32 scores per layer (`[B, Hq, T, S]`), times the
 * score-sized tensors alive at the worst moment — `6 + 2 · layers` for inference,
 * `6 + 3 · layers` while gradients are recorded through recomputed attention, `7 + 26 · layers`
 * while they are recorded with the probabilities captured — and, while recording, `4 · B · T ·
 * (12 · vocab + 32 · layers · (hidden + intermediate))` bytes of per-token tensors the tape holds
 * (from measurements on the wasm backend, rounded up; they over-estimate the engine's peak by
 * 5–25 % with masks, key biases or captured probabilities, by more under the causal mask alone).
 */
export function attentionBytes(extent: AttentionExtent, mode: AttentionMemoryMode): number {
  const { batch, queryHeads, queries, keys, layers } = extent;
  const scores = 4 * batch * queryHeads * queries * keys;
  if (mode === 'inference') {
    return scores * (WORKING_SCORES + RETAINED_SCORES_PER_LAYER * layers);
  }
  const perToken =
    RECORDED_VOCAB_ROWS * extent.vocab +
    RECORDED_WIDTH_ROWS_PER_LAYER * layers * (extent.hidden + extent.intermediate);
  const tokens = 4 * batch * queries * perToken;
  return mode === 'taped'
    ? scores * (TAPED_WORKING_SCORES + TAPED_SCORES_PER_LAYER * layers) + tokens
    : scores * (RECOMPUTED_WORKING_SCORES + RECOMPUTED_SCORES_PER_LAYER * layers) + tokens;
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
