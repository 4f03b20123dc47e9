import {
  type Anchors,
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type RandomSource,
  type TriggerContext,
} from '@lethe/kv-cache';

/**
 * A minimal eviction policy for runtime tests, written against the raw `EvictionPolicy`
 * interface (no shared machinery): once a head holds more than `capacity + slack` entries,
 * keep each head's newest `capacity` entries, or — with `perHeadRandom` — a random subset per
 * head (so heads diverge).
 */
export class RecentWindowPolicy implements EvictionPolicy {
  readonly name = 'recent-window-test';
  readonly needs: ObservationNeeds;
  readonly anchors: Anchors = { sinks: 1, window: 0 };

  constructor(
    private readonly capacity: number,
    private readonly slack: number,
    private readonly perHeadRandom = false,
    needs: Partial<ObservationNeeds> = {},
  ) {
    this.needs = { ...NO_NEEDS, ...needs };
  }

  shouldEvict(context: TriggerContext): boolean {
    return context.liveCounts.some((n) => n > this.capacity + this.slack);
  }

  select(observation: LayerObservation, rng: RandomSource): KeepDecision {
    const keep = Array.from({ length: observation.kvHeads }, (_, h) => {
      const live = observation.liveCounts[h]!;
      if (!this.perHeadRandom) {
        return Int32Array.from({ length: this.capacity }, (_, i) => live - this.capacity + i);
      }
      const u = rng.fillUniform(new Float32Array(live));
      const order = Array.from({ length: live }, (_, i) => i).sort((a, b) => u[a]! - u[b]!);
      return Int32Array.from(order.slice(0, this.capacity)).sort();
    });
    return { granularity: 'head', keep };
  }
}
