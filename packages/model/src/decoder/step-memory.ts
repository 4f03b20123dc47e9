import { LetheError } from '@lethe/core';
import { tensorMemoryHeadroom } from '@lethe/tensor';

/**
 * `[N, D]`-sized float32 tensors one layer of a cached step holds at once (its own `tf.tidy`
 * frees them before the next layer): the residual, the norms' outputs, the attention input's
 * transpose, the output projection and its transpose, the residual sums, the MLP's input and
 * output transposes — 14 counted from the ops, rounded up.
 */
const HIDDEN_TENSORS = 16;
/** `[I, N]`-sized ones: the gate and up products, the sigmoid and the two products (5), rounded up. */
const INTERMEDIATE_TENSORS = 6;
/** Per logit row: the lm head's product and its transpose. */
const LOGIT_TENSORS = 2;

/** The sizes that decide how much tensor memory a cached step needs. */
export interface StepExtent {
  /** Tokens of all chunks (the step's rows). */
  readonly rows: number;
  /** Rows whose logits are computed: one per sequence, plus every row of `everyPosition`'s. */
  readonly logitRows: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  /** Floats of one row's q, k and v products, `(Hq + 2·Hkv)·headDim`. */
  readonly projections: number;
  readonly vocabSize: number;
}

/**
 * Estimated peak bytes of tensor memory a cached step takes: linear in its rows, since its
 * attention runs on the host from the caches and never holds a score matrix on the backend —
 * `4·N·(16·D + 6·I + 2·(Hq + 2·Hkv)·hd) + 4·L·2·V` for `N` rows and `L` logit rows.
 */
export function stepBytes(extent: StepExtent): number {
  const { rows, logitRows, hiddenSize, intermediateSize, projections, vocabSize } = extent;
  const perRow =
    HIDDEN_TENSORS * hiddenSize + INTERMEDIATE_TENSORS * intermediateSize + 2 * projections;
  return 4 * (rows * perRow + logitRows * LOGIT_TENSORS * vocabSize);
}

/**
 * Refuses, before anything is allocated, a cached step that would not fit the backend's tensor
 * memory ({@link stepBytes} against `tensorMemoryHeadroom()`: on wasm, the 4 GiB heap less what
 * live tensors hold, whose overflow aborts the module; no limit on other backends).
 *
 * @param argument the input to name (`prompts`, `tokens`).
 * @throws LetheError `E_SHAPE` naming `argument`, the message giving the rows and the bytes.
 */
export function checkStepMemory(extent: StepExtent, argument: string): void {
  const headroom = tensorMemoryHeadroom();
  if (!Number.isFinite(headroom)) return;
  const need = stepBytes(extent);
  if (need <= headroom) return;
  throw new LetheError(
    'E_SHAPE',
    `a step of ${extent.rows} tokens (${extent.logitRows} of them with logits) needs about ${(need / 1e9).toFixed(2)} GB of tensor memory, more than the ${(headroom / 1e9).toFixed(2)} GB the backend has left; prefill in smaller chunks or fewer sequences at once`,
    argument,
  );
}
