import { tf } from './tf';

/**
 * The largest heap tfjs-backend-wasm 4.22 can grow to: wasm32 memory of 65,535 pages of 64 KiB
 * (its build's `getHeapMax()`). Every tensor of the wasm backend lives in this heap; an
 * allocation past it aborts the module (`RuntimeError: Aborted()`, `table index is out of
 * bounds` or `memory access out of bounds`), which leaves the backend unusable.
 */
export const WASM_HEAP_MAX_BYTES = 4_294_901_760;

/**
 * Bytes the active backend can still give to new tensors before it fails outright, as far as
 * Lethe knows: on wasm, {@link WASM_HEAP_MAX_BYTES} minus the bytes live tensors hold
 * (`tf.memory().numBytes`; fragmentation can make the real headroom smaller); `Infinity` on the
 * other backends, which have no fixed ceiling Lethe can check (cpu allocates from the
 * JavaScript heap, webgpu from the device and reports its own errors).
 *
 * @example
 * ```ts
 * if (bytesNeeded > tensorMemoryHeadroom()) throw new Error('too large for this backend');
 * ```
 */
export function tensorMemoryHeadroom(): number {
  if (tf.getBackend() !== 'wasm') return Number.POSITIVE_INFINITY;
  return Math.max(0, WASM_HEAP_MAX_BYTES - tf.memory().numBytes);
}

/**
 * Whether tfjs is recording operations for gradients right now (inside `tf.grad`,
 * `tf.variableGrads`, `optimizer.minimize`, …): the tape then keeps the intermediate tensors of
 * the whole computation alive until the backward pass, so a function's peak memory is far
 * higher than without.
 */
export function isRecordingGradients(): boolean {
  return tf.engine().state.gradientDepth > 0;
}
