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
 * interface (no shared machinery): once a head holds more than `keepCount + slack` entries,
 * keep each head's newest `keepCount` entries, or — with `perHeadRandom` — a random subset per
 * head (so heads diverge).
 */
export class RecentWindowPolicy implements EvictionPolicy {
  readonly name = 'recent-window-test';
  readonly needs: ObservationNeeds;
  readonly anchors: Anchors = { sinks: 1, window: 0 };

  constructor(
    private readonly keepCount: number,
    private readonly slack: number,
    private readonly perHeadRandom = false,
    needs: Partial<ObservationNeeds> = {},
  ) {
    this.needs = { ...NO_NEEDS, ...needs };
  }

  shouldEvict(context: TriggerContext): boolean {
    return context.liveCounts.some((n) => n > this.keepCount + this.slack);
  }

  select(observation: LayerObservation, rng: RandomSource): KeepDecision {
    const keep = Array.from({ length: observation.kvHeads }, (_, h) => {
      const live = observation.liveCounts[h]!;
      if (!this.perHeadRandom) {
        return Int32Array.from({ length: this.keepCount }, (_, i) => live - this.keepCount + i);
      }
      const u = rng.fillUniform(new Float32Array(live));
      const order = Array.from({ length: live }, (_, i) => i).sort((a, b) => u[a]! - u[b]!);
      return Int32Array.from(order.slice(0, this.keepCount)).sort();
    });
    return { granularity: 'head', keep };
  }
}
