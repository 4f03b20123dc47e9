import type { LayerControls, ReadAnchors, ReadSelector } from '@lethe/kv-cache';
import type { tf } from '@lethe/tensor';

/**
 * Computes an additive attention-logit bias per key from a layer's attention input — the hook
 * through which a gate network (Octopus / GSA: `log σ(gate(x))`) acts inside the forward pass.
 *
 * @param layer layer index.
 * @param attentionInput the layer's attention input `[B, T, D]` (after `input_layernorm`).
 * @returns `[B, Hkv, T]` bias of each of the T tokens' keys (added to the logits of every query
 *   that sees them), or undefined for no bias at this layer. Tensors it returns are disposed by
 *   the model.
 */
export type KeyBiasHook = (layer: number, attentionInput: tf.Tensor) => tf.Tensor | undefined;

/**
 * Computes one layer's key visibility from its attention input — the hook through which training
 * applies a cache's evictions decided inside the forward pass (GSA's eviction in the loop: which
 * entries each query row still sees, by the gate's scores of the layer's own input).
 *
 * @param layer layer index.
 * @param attentionInput the layer's attention input `[B, T, D]` (after `input_layernorm`).
 * @returns `[B|1, 1|Hkv, T, T]` visibility (nonzero = visible), ANDed with the causal mask, or
 *   undefined for causal attention at this layer. A constant: no gradient flows through it.
 *   Tensors it returns are disposed by the model.
 */
export type MaskHook = (layer: number, attentionInput: tf.Tensor) => tf.Tensor | undefined;

/** What {@link ForwardOptions.capture} asks the parallel forward to return. */
export interface ForwardCapture {
  /**
   * Per-layer attention probabilities `[B, Hq, T, T]`. While gradients are recorded this costs
   * memory: the tape then keeps each layer's attention intermediates (about twenty score-sized
   * tensors a layer) instead of recomputing them in the backward pass.
   */
  readonly attention?: boolean;
  /** Final hidden state (after the final RMSNorm, the LM head's input) `[B, T, D]`. */
  readonly hidden?: boolean;
  /** Per-layer keys after RoPE `[B, Hkv, T, headDim]`. */
  readonly keys?: boolean;
  /** Per-layer attention inputs (after `input_layernorm`, what a gate reads) `[B, T, D]`. */
  readonly attentionInputs?: boolean;
}

/** Options of the parallel forward (training, prefill-style scoring, replay). */
export interface ForwardOptions {
  /** int32 `[B, T]` token positions for RoPE; default `0 … T−1` in every row. */
  readonly positions?: tf.Tensor;
  /**
   * Per-layer key visibility `[B|1, 1|Hkv, T, T]` (nonzero = visible), ANDed with the causal
   * mask — e.g. the cache's replay masks: a list of length `num_hidden_layers` (undefined
   * entries: causal), or a {@link MaskHook} that computes each layer's from its input.
   */
  readonly masks?: readonly (tf.Tensor | undefined)[] | MaskHook;
  /**
   * Additive logit bias per key: per layer `[B|1, Hkv|1, T]` tensors (length
   * `num_hidden_layers`, undefined entries: none), or a {@link KeyBiasHook}. Differentiable.
   */
  readonly keyBias?: readonly (tf.Tensor | undefined)[] | KeyBiasHook;
  /**
   * Per-layer MLP controls applied to every token (`mlpInputKeep`, `mlpKeep`,
   * `activationBits`); attention controls (`attentionBias`, `readPages`, `tokenKeep`) have no
   * meaning without a cache (use `masks` / `keyBias`) and are rejected.
   */
  readonly controls?: readonly (LayerControls | undefined)[];
  /** Extra outputs to return. */
  readonly capture?: ForwardCapture;
}

/** Result of the parallel forward. The caller owns (and disposes) every tensor. */
export interface ForwardResult {
  /** Next-token logits `[B, T, V]`. */
  readonly logits: tf.Tensor3D;
  /** Per-layer attention probabilities `[B, Hq, T, T]` when captured. */
  readonly attention?: tf.Tensor4D[];
  /** Final hidden state `[B, T, D]` when captured. */
  readonly hidden?: tf.Tensor3D;
  /** Per-layer keys after RoPE `[B, Hkv, T, headDim]` when captured. */
  readonly keys?: tf.Tensor4D[];
  /** Per-layer attention inputs `[B, T, D]` when captured. */
  readonly attentionInputs?: tf.Tensor3D[];
}

/** Per-sequence, per-layer controls of a cached step: `controls[b][layer]`. */
export type BatchControls = readonly (readonly (LayerControls | undefined)[] | undefined)[];

/** Options of {@link DecoderModel.prefill} and {@link DecoderModel.decodeStep}. */
export interface StepOptions {
  /**
   * Gate hook (GSA): its output is each new key's log-gate. The gate `exp(bias)` is stored with
   * the entry (the caches must be created with `storeGates: true`), and every query adds
   * `log(gate)` of every key it reads.
   *
   * One hook serves every sequence: then every cache must store gates. Or one entry per
   * sequence (`keyBias[b]`, an array as long as the batch; undefined for a sequence without a
   * gate): cache `b` must store gates exactly when it has a hook, each distinct hook runs once per
   * layer on the rows of the sequences that share it, and a sequence without one is computed as
   * in a batch without gates. Required exactly when some cache stores gates.
   */
  readonly keyBias?: KeyBiasHook | readonly (KeyBiasHook | undefined)[];
}

/** Options of {@link DecoderModel.prefill}: those of every cached step, plus which logits it returns. */
export interface PrefillOptions extends StepOptions {
  /**
   * Per sequence, whether to return its logits at every position of its chunk
   * (`StepResult.positionLogits`) — what scoring a prompt needs (the log-probability of each of
   * its tokens given those before it) — besides the last position's. Default: none.
   */
  readonly everyPosition?: readonly boolean[];
}

/** Options of {@link DecoderModel.decodeStep}: those of every cached step, plus a read selector. */
export interface DecodeStepOptions extends StepOptions {
  /**
   * Read-time page selection (Quest): in every layer, after the new token's query is computed
   * and before attention, `readSelector.selectPages(cache.observe(layer, readSelector.needs),
   * query)` runs for each sequence with its own cache and its query after RoPE
   * (`[queryHeads, headDim]`). The pages it returns restrict the read exactly as
   * `LayerControls.readPages` does (undefined: dense). When the layer's controls also give
   * `readPages`, only pages in both lists are read (the intersection). `pageSize` must equal
   * the caches', the selector may not need `hidden`, and the caches must keep what its `needs`
   * ask for. It is given the query the step reads back for its attention; prefill always reads
   * densely.
   *
   * One selector for every sequence, or one entry per sequence (an array as long as the batch;
   * undefined: that sequence reads densely), each checked against its own cache.
   */
  readonly readSelector?: ReadSelector | readonly (ReadSelector | undefined)[];
  /**
   * Entries a `tokenKeep` read (`LayerControls.tokenKeep` κ < 1) never skips, per KV head: the
   * first `sinks` and the last `window` live entries. Default `{ sinks: 4, window: 2 }` (SOL §4,
   * `DEFAULT_READ_ANCHORS`); a missing field takes its default. They count against the read's
   * budget `b = ⌈κ·K⌉`: the token reads them plus the top `⌈max(0, b − sinks − window) /
   * pageSize⌉` pages of the rest by Quest's bound (see `tokenKeepRead` of `@lethe/kv-cache`).
   */
  readonly readAnchors?: Partial<ReadAnchors>;
}

/**
 * What the new tokens of a cached step read of each cache, per sequence, layer and KV head
 * (`[B, layers, kvHeads]`, row `(b·layers + l)·kvHeads + h`). `entries / live` is the realised
 * read fraction of a `tokenKeep` or page-restricted read; a dense read has `entries = live`.
 */
export interface StepReads {
  /** Cached entries read (the tokens' own keys not included). */
  readonly entries: Int32Array;
  /** Live entries the cache held before the step. */
  readonly live: Int32Array;
}

/** Result of a cached step: the newest token of every sequence. The caller owns the tensors. */
export interface StepResult {
  /** Next-token logits `[B, V]`. */
  readonly logits: tf.Tensor2D;
  /** Final hidden state (after the final RMSNorm) `[B, D]`. */
  readonly hidden: tf.Tensor2D;
  /** Entries read from each cache (host arrays). */
  readonly reads: StepReads;
  /**
   * With {@link PrefillOptions.everyPosition}: the next-token logits at every position of the
   * chunks of the sequences it flags, `[Σ lengths, V]` — each flagged sequence's rows in order,
   * sequences in batch order (row `t` of a sequence predicts its chunk's token `t + 1`; its last
   * row predicts what its `logits` row does, equal up to the matmul's rounding). Undefined
   * otherwise.
   */
  readonly positionLogits?: tf.Tensor2D;
}
