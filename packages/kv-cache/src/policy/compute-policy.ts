import type { RandomSource } from './random-source';

/** Per-layer controls applied to one decode step (SOL, GSA). Every field is optional. */
export interface LayerControls {
  /** Additive bias on attention logits per live entry, `[kvHeads, maxLive]` (e.g. log-gates). */
  readonly attentionBias?: Float32Array;
  /** Pages (of `pageSize` live entries, per KV head) the attention read is restricted to. */
  readonly readPages?: readonly Int32Array[];
  /**
   * SOL's token keep rate κ in (0, 1] (App. E.1): the new token reads `b = ⌈κ·K⌉` of the `K`
   * live entries of each KV head, as the top `⌈b / pageSize⌉` pages by Quest's bound for its
   * query, plus the always-read sinks and recent window; 1 (or undefined) reads densely.
   */
  readonly tokenKeep?: number;
  /**
   * SOL's MLP input keep rate ρ in (0, 1] (App. E.2): per token, the `⌈ρ·hiddenSize⌉` channels
   * of the MLP's input (the normed residual stream) with the largest |activation| are kept and
   * the rest zeroed; 1 (or undefined) keeps all.
   */
  readonly mlpInputKeep?: number;
  /** MLP intermediate channels to keep: a 0/1 mask `[intermediateSize]`, or a keep rate in (0, 1] applied as top-k by |activation|. */
  readonly mlpKeep?: Uint8Array | number;
  /**
   * Fake-quantisation bit width q of the MLP output (App. E.3), an integer in [2, 16]; 16 (or
   * undefined) leaves it at full precision.
   */
  readonly activationBits?: number;
}

/** What a compute policy observes before a decode step. */
export interface StepObservation {
  /** Tokens processed so far (the position of the token this step feeds). */
  readonly step: number;
  /** The token this step feeds. */
  readonly token: number;
  /** Final hidden state of the previous token, `[hiddenSize]`. */
  readonly hidden: Float32Array;
  /**
   * The model's input embedding of `token`, `[hiddenSize]`, when the policy's
   * {@link ComputeNeeds.embedding} asks for it.
   */
  readonly embedding?: Float32Array;
  /**
   * The next-token logits `[vocabSize]` the runtime returned for this sequence's previous step
   * (the prefill's last token before the first decode step): the distribution `token` was drawn
   * or teacher-forced from, when the policy's {@link ComputeNeeds.logits} asks for them. A KV
   * refresh does not replace them (its logits are discarded).
   */
  readonly logits?: Float32Array;
  /** Live entries per layer (summed over KV heads). */
  readonly livePerLayer: Int32Array;
}

/**
 * The knobs a compute policy sets (SOL's enabled axes): its net keep-rate averages the realised
 * keep rates of these axes only (§5: `(κ̄ + ρ̄ + η̄) / 3` with all three, `κ̄` with token sparsity
 * alone).
 */
export interface ControlledAxes {
  /** `tokenKeep` (κ). */
  readonly tokenKeep: boolean;
  /** `mlpInputKeep` (ρ). */
  readonly mlpInputKeep: boolean;
  /** `activationBits` (q, counted as η = q / 16). */
  readonly activationBits: boolean;
}

/** What a compute policy asks the runtime to observe for it, beyond the defaults. */
export interface ComputeNeeds {
  /** The input embedding of the token each step feeds (one row read per step). */
  readonly embedding: boolean;
  /** The previous step's next-token logits (SOL's entropy-matched baseline; default false). */
  readonly logits?: boolean;
}

/**
 * A compute policy returns per-step controls for every layer (undefined: layer runs dense).
 *
 * A policy with memory across steps (SOL's controller and its budget bookkeeping) implements
 * {@link ComputePolicy.createState}: the runtime calls it once per sequence and passes that
 * sequence's state to every `controls` of the sequence, so the sequences of a batch never share
 * it.
 */
export interface ComputePolicy<S = unknown> {
  /** Human-readable method name. */
  readonly name: string;
  /** Extra observations (default: none). */
  readonly needs?: ComputeNeeds;
  /**
   * The knobs it sets, for reports of its net keep-rate; undefined: not declared (a harness
   * then counts only what the attention read).
   */
  readonly axes?: ControlledAxes;
  /**
   * SOL's periodic KV refresh (§4): the episode length `T`, in decode steps. After every `T`
   * decode steps of a sequence, once that step's outputs are returned as usual, the runtime
   * recomputes the KV entries of the `T` tokens those steps fed with one fully dense pass (no
   * controls: the cache truncated to `length − T`, then those tokens prefilled again), so the
   * entries written under this policy's controls live at most `T` steps; the tokens are not
   * resampled, the refresh's logits are discarded, and the next step observes the refreshed
   * last hidden state. A positive integer; undefined (the default) never refreshes.
   * `@lethe/model`'s `GenerationSession` refuses it (`E_ARG` naming `compute.refreshEvery`)
   * unless a positive integer, and together with an eviction policy or a read selector.
   */
  readonly refreshEvery?: number;
  /** A fresh per-sequence state, called once per sequence before its first decode step. */
  createState?(): S;
  /**
   * Controls for the next decode step, one entry per layer.
   *
   * @param state the sequence's own state from {@link ComputePolicy.createState}.
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: S,
  ): readonly (LayerControls | undefined)[];
}
