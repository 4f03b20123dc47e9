/**
 * A learned per-token gate (Octopus / GSA): a small network the model runs on every token it
 * writes to the cache, once, giving each KV head a utility `g ∈ (0, 1)`. The runtime stores `g`
 * with the entry (the cache's per-entry gate, the observation's `gates`) and adds `log g` to the
 * attention logits of every query that reads the entry, in prefill and in decode alike.
 *
 * The cache and the policy API never touch the gate's tensors: `T` is the tensor type of the
 * runtime that runs it (`tf.Tensor` in `@lethe/model`, whose `GenerationSession` calls
 * {@link AttentionGate.logGates} inside each layer's forward).
 *
 * @typeParam T The runtime's tensor type.
 */
export interface AttentionGate<T = unknown> {
  /** Human-readable name (e.g. `"gsa"`). */
  readonly name: string;
  /**
   * The log-gates of the tokens a layer writes: from the layer's attention input `[B, T, D]`
   * (after its input norm), `log g` as `[B, kvHeads, T]`, every value ≤ 0. The runtime disposes
   * what it returns.
   */
  logGates(layer: number, attentionInput: T): T;
}
