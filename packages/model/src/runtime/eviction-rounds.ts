import type {
  EvictionPolicy,
  KeepDecision,
  KVCacheStore,
  LayerObservation,
  ObservationNeeds,
} from '@lethe/kv-cache';
import type { Rng } from '@lethe/tensor';

/** One eviction round, once the cache has applied its decision. */
export interface EvictionRound {
  /** Layer index. */
  readonly layer: number;
  /** Tokens in the layer when the round ran (the cache's `length(layer)`). */
  readonly step: number;
  /** What the policy observed; its arrays are only valid during the call (copy what you keep). */
  readonly observation: LayerObservation;
  /** What the policy returned and the cache applied. */
  readonly decision: KeepDecision;
}

/**
 * One sequence's eviction policy at work: the policy's per-sequence state
 * (`EvictionPolicy.createState`, made here), its random stream, the tokens each layer took since
 * its last round, and the entries the rounds evicted. After every prefill chunk or decode step of
 * the sequence, {@link EvictionRounds.run} asks the policy per layer whether to run a round
 * (`shouldEvict`), then what to keep (`select`), and has the cache apply it. The observation is
 * the cache's `observeAsync` where it has one (a device cache computes attention where its
 * entries live and reads back only what the policy asks for), its `observe` otherwise.
 */
export class EvictionRounds {
  private readonly state: unknown;
  private readonly sinceRound: Int32Array;
  private evicted = 0;

  /**
   * @param policy the sequence's eviction policy.
   * @param rng its random stream for this sequence.
   * @param layers the model's layers.
   */
  constructor(
    readonly policy: EvictionPolicy,
    private readonly rng: Rng,
    layers: number,
  ) {
    this.state = policy.createState?.();
    this.sinceRound = new Int32Array(layers);
  }

  /** Entries the rounds removed so far, summed over layers and KV heads. */
  get evictedEntries(): number {
    return this.evicted;
  }

  /**
   * Runs the rounds due once `advanced` more tokens were appended to every layer of `cache`: per
   * layer, `shouldEvict` with the layer's live counts, tokens since its last round and the tokens
   * `incoming` before the next round (a prefill chunk; 1, a decode step, by default); when due,
   * the observation the policy needs (`hidden`, the sequence's final hidden state, when it asks
   * for it; a policy reading attention since its last round gets only those queries), its
   * decision, applied by `cache.keep`, then `onRound`.
   *
   * @throws the policy's and the cache's errors (a bad decision is the cache's `E_ARG`).
   */
  async run(
    cache: KVCacheStore,
    advanced: number,
    hidden: Float32Array,
    onRound?: (round: EvictionRound) => void,
    incoming = 1,
  ): Promise<void> {
    const policy = this.policy;
    const since = this.sinceRound;
    for (let layer = 0; layer < since.length; layer++) {
      since[layer]! += advanced;
      const liveCounts = cache.liveCounts(layer);
      const due = policy.shouldEvict(
        {
          layer,
          step: cache.length(layer),
          liveCounts,
          sinceLastRound: since[layer]!,
          ...(incoming === 1 ? {} : { incoming }),
        },
        this.state,
      );
      if (!due) continue;
      const needs = roundNeeds(policy.needs, since[layer]!);
      const given = policy.needs.hidden ? hidden : undefined;
      const observed =
        cache.observeAsync === undefined
          ? cache.observe(layer, needs, given)
          : await cache.observeAsync(layer, needs, given);
      const observation = incoming === 1 ? observed : { ...observed, incoming };
      const decision = policy.select(observation, this.rng, this.state);
      const step = cache.length(layer);
      cache.keep(layer, decision);
      this.evicted += sumOf(liveCounts) - sumOf(cache.liveCounts(layer));
      since[layer] = 0;
      onRound?.({ layer, step, observation, decision });
    }
  }
}

/** The needs of one round: a policy reading attention since its last round gets only those queries. */
function roundNeeds(needs: ObservationNeeds, sinceLastRound: number): ObservationNeeds {
  if (!needs.attentionSinceLastRound) return needs;
  return { ...needs, attentionWindow: Math.min(needs.attentionWindow, sinceLastRound) };
}

/** The sum of `values`. */
export function sumOf(values: Int32Array): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}
