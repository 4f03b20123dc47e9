import type { RandomSource } from './random-source';

/** Per-layer controls applied to one decode step (SOL, GSA). Every field is optional. */
export interface LayerControls {
  /** Additive bias on attention logits per live entry, `[kvHeads, maxLive]` (e.g. log-gates). */
  readonly attentionBias?: Float32Array;
  /** Pages (of `pageSize` live entries, per KV head) the attention read is restricted to. */
  readonly readPages?: readonly Int32Array[];
  /** MLP intermediate channels to keep: a 0/1 mask `[intermediateSize]`, or a keep rate in (0, 1] applied as top-k by |activation|. */
  readonly mlpKeep?: Uint8Array | number;
  /** Fake-quantisation bit width for activations (2–16), or undefined for full precision. */
  readonly activationBits?: number;
}

/** What a compute policy observes before a decode step. */
export interface StepObservation {
  /** Tokens processed so far. */
  readonly step: number;
  /** Final hidden state of the previous token, `[hiddenSize]`. */
  readonly hidden: Float32Array;
  /** Live entries per layer (summed over KV heads). */
  readonly livePerLayer: Int32Array;
}

/** A compute policy returns per-step controls for every layer (undefined: layer runs dense). */
export interface ComputePolicy {
  /** Human-readable method name. */
  readonly name: string;
  /** Controls for the next decode step, one entry per layer. */
  controls(observation: StepObservation, rng: RandomSource): readonly (LayerControls | undefined)[];
}
