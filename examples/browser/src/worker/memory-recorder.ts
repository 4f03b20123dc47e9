import { type KVCacheStore, NO_NEEDS } from '@lethe/kv-cache';
import type { EvictionRoundEvent } from '@lethe/model';
import type { RoundScores, StepSnapshot } from './protocol';

/**
 * Follows what one sequence's cache holds from step to step: each snapshot gives the live
 * entries per (layer, KV head) and the positions each head dropped since the previous one, so a
 * view can fade a token out at the step it went. Reads positions only (an observation every
 * cache serves, the device cache too).
 */
export class MemoryRecorder {
  private held: Set<number>[] | undefined;
  /** Each layer's latest scored round since the last snapshot. */
  private rounds = new Map<number, RoundScores>();
  private step = 0;
  private positions = 0;

  /** Keeps the scores of an eviction round, when its policy gave them. */
  round(event: EvictionRoundEvent): void {
    const { scores } = event.decision;
    if (scores === undefined) return;
    const { observation } = event;
    const heads = Array.from({ length: observation.kvHeads }, (_, h) => {
      const start = h * observation.maxLive;
      const end = start + observation.liveCounts[h]!;
      return {
        positions: Array.from(observation.positions.subarray(start, end)),
        scores: Array.from(scores.subarray(start, end)),
      };
    });
    this.rounds.set(event.layer, { layer: event.layer, heads });
  }

  /**
   * A snapshot of `cache` now, `glyphs` being the glyphs of every position fed since the previous
   * snapshot. A position fed and dropped between two snapshots went at the later one.
   */
  snapshot(cache: KVCacheStore, glyphs: readonly string[]): StepSnapshot {
    const { layers, kvHeads } = cache.geometry;
    const now: Set<number>[] = [];
    for (let layer = 0; layer < layers; layer++) {
      const view = cache.observe(layer, NO_NEEDS);
      for (let h = 0; h < kvHeads; h++) {
        const held = new Set<number>();
        for (let i = 0; i < view.liveCounts[h]!; i++)
          held.add(view.positions[h * view.maxLive + i]!);
        now.push(held);
      }
    }
    const fed = this.positions + glyphs.length;
    // what each row could have dropped: what it held, and every position fed since
    const arrived = Array.from({ length: glyphs.length }, (_, i) => this.positions + i);
    const evicted = now.map((held, i) =>
      [...(this.held?.[i] ?? []), ...arrived]
        .filter((position) => !held.has(position))
        .sort((a, b) => a - b),
    );
    this.held = now;
    this.positions = fed;
    const rounds = [...this.rounds.values()];
    this.rounds = new Map();
    return {
      step: this.step++,
      glyphs,
      positions: fed,
      live: now.map((held) => held.size),
      evicted,
      rounds,
    };
  }
}
