import type { LaneStart, RoundScores, StepSnapshot } from '../worker/protocol';

/**
 * What one lane's cache held, as the page rebuilds it from the worker's snapshots: per position
 * its glyph, per (layer, KV head) row the step each position was evicted at (−1 while held), and
 * the live entries of every step.
 */
export class LaneMemory {
  readonly rows: number;
  readonly glyphs: string[] = [];
  /** `[row][position]`: the step the row evicted the position at, −1 while held. */
  readonly evictedAt: number[][];
  /** Live entries of the whole cache (every layer and KV head) at each step. */
  readonly liveByStep: number[] = [];
  /** Positions fed by each step. */
  readonly positionsByStep: number[] = [];
  /** Each layer's latest scored eviction round, and the step it was reported at. */
  readonly lastRounds = new Map<number, RoundScores & { readonly step: number }>();
  /** The latest snapshot's live entries per row. */
  live: readonly number[] = [];
  step = 0;

  constructor(readonly start: LaneStart) {
    this.rows = start.layers * start.kvHeads;
    this.evictedAt = Array.from({ length: this.rows }, () => []);
  }

  /** Applies the next snapshot. */
  apply(snapshot: StepSnapshot): void {
    for (const glyph of snapshot.glyphs) {
      this.glyphs.push(glyph);
      for (const row of this.evictedAt) row.push(-1);
    }
    snapshot.evicted.forEach((positions, row) => {
      for (const position of positions) this.evictedAt[row]![position] = snapshot.step;
    });
    for (const round of snapshot.rounds)
      this.lastRounds.set(round.layer, { ...round, step: snapshot.step });
    this.live = snapshot.live;
    this.step = snapshot.step;
    this.liveByStep.push(snapshot.live.reduce((a, b) => a + b, 0));
    this.positionsByStep.push(snapshot.positions);
  }

  /** Rows holding `position` now. */
  holders(position: number): number {
    let n = 0;
    for (const row of this.evictedAt) if (row[position] === -1) n++;
    return n;
  }

  /** The last step any row evicted `position` at, −1 when some row still holds it. */
  goneAt(position: number): number {
    let last = -1;
    for (const row of this.evictedAt) {
      const at = row[position]!;
      if (at === -1) return -1;
      last = Math.max(last, at);
    }
    return last;
  }
}
