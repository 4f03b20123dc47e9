import type { Anchors } from '../geometry';
import type { AttentionGate } from './attention-gate';
import type { LayerObservation, ObservationNeeds } from './observation';
import type { RandomSource } from './random-source';

/**
 * The keep set chosen for one layer: indices into the live entries (see {@link LayerObservation}).
 *
 * `scores`, when the policy scores entries, are the scores it chose from, `[kvHeads, maxLive]`
 * laid out as the observation's entries (padding unspecified), higher meaning more worth keeping —
 * for whoever shows why entries went (the browser example); a runtime ignores them. The scoring
 * heuristics, GSA and NAMM give them.
 */
export type KeepDecision =
  /** One keep set shared by every KV head of the layer (NGC); heads must have equal live sets. */
  | {
      readonly granularity: 'layer';
      readonly keep: Int32Array;
      readonly logProb?: number;
      readonly scores?: Float32Array;
    }
  /** One keep set per KV head (GSA, NAMM, per-head heuristics). */
  | {
      readonly granularity: 'head';
      readonly keep: readonly Int32Array[];
      readonly logProb?: number;
      readonly scores?: Float32Array;
    };

/** What a trigger sees when asked whether to run an eviction round for a layer. */
export interface TriggerContext {
  /** Layer index. */
  readonly layer: number;
  /** Tokens processed so far. */
  readonly step: number;
  /** Live entries per KV head of this layer. */
  readonly liveCounts: Int32Array;
  /** Tokens processed since this layer's last eviction round (or since the start). */
  readonly sinceLastRound: number;
  /**
   * Tokens the runtime appends before the next round (default 1; see
   * `LayerObservation.incoming`): a live-count trigger fires once they would not fit.
   */
  readonly incoming?: number;
}

/**
 * An eviction policy decides *when* to evict ({@link EvictionPolicy.shouldEvict}) and *what* to
 * keep ({@link EvictionPolicy.select}) from an observation of plain typed arrays. Keep decisions
 * are permanent. Anchors (sinks and recent window) are always kept by the cache.
 *
 * One policy object serves every sequence of a batch. A policy that remembers something across
 * rounds (an EMA of attention, a controller's hidden state) implements
 * {@link EvictionPolicy.createState}: the runtime calls it once per sequence and passes that
 * sequence's state to every `shouldEvict` and `select` of the sequence, so the sequences of a
 * batch never share memory. `S` is the state's type.
 */
export interface EvictionPolicy<S = unknown> {
  /** Human-readable method name, e.g. `"h2o"`. */
  readonly name: string;
  /** Observation fields this policy reads. */
  readonly needs: ObservationNeeds;
  /** Anchors the cache must protect for this policy. */
  readonly anchors: Anchors;
  /**
   * For a policy whose rounds must see the attention of every query since the previous round
   * (NAMM's spectrograms): the runtime ends prefill chunks at every multiple of this many prompt
   * tokens (besides its own chunk boundaries), so a round after a chunk never finds more new
   * queries than `needs.attentionWindow`. Absent: prefill chunks are the runtime's choice.
   */
  readonly prefillChunk?: number;
  /**
   * For a policy that ranks entries by a learned gate (GSA): the gate network the model must run
   * on every token it writes. A runtime given such a policy creates caches that store gates
   * (`storeGates`), runs the gate in every layer of prefill and decode, adds `log g` to the
   * attention logits, and the policy reads the stored gates from `observation.gates`. The gate
   * belongs to the policy because what it scores and what the cache keeps are one learned object:
   * every runtime that takes an eviction policy runs GSA without another seam.
   */
  readonly gate?: AttentionGate;
  /**
   * A fresh per-sequence state (optional): called once per sequence before its first token.
   * Stateless policies omit it and get `undefined` as `state`.
   */
  createState?(): S;
  /** When: whether to run an eviction round for this layer now. */
  shouldEvict(context: TriggerContext, state?: S): boolean;
  /**
   * What: the entries of this layer to keep. `rng` serves sampled policies; `state` is the
   * sequence's own state from {@link EvictionPolicy.createState} (undefined without one).
   */
  select(observation: LayerObservation, rng: RandomSource, state?: S): KeepDecision;
}
