import { LetheError } from '@lethe/core';
import type { AxisUsage } from '../actions/action-set';
import { EpisodeBudget } from '../budget/episode-budget';

/**
 * An {@link EpisodeBudget} that also counts its effective steps, so that a rule can steer the
 * rest of the episode toward the targets: {@link SteeredEpisodeBudget.required} is the average
 * usage per axis the remaining steps must realise for the episode's average over its effective
 * steps to equal the targets.
 *
 * @throws LetheError `E_ARG` naming `horizon` from the constructor (as `EpisodeBudget`'s) unless
 *   it is a positive integer.
 */
export class SteeredEpisodeBudget extends EpisodeBudget {
  private counted = 0;

  /** Effective steps taken so far in this episode (those that count toward the budget). */
  get effectiveCount(): number {
    return this.counted;
  }

  /** Steps left in this episode, `T − steps`. */
  get remaining(): number {
    return this.horizon - this.steps;
  }

  /** Records the step just taken: its usage `[κ, ρ, η]` counts when `effective`. */
  override record(usage: AxisUsage, effective: boolean): void {
    super.record(usage, effective);
    if (effective) this.counted += 1;
  }

  /**
   * `r = (C·(e + R) − Σ used) / R` per axis: with `e` effective steps taken, `Σ used` their usage
   * and `R` steps remaining (the next one included), the average the remaining steps must realise
   * so that the episode's average over its effective steps is `C`. The remaining steps are all
   * counted as effective — they are once one is, since a step is effective when its position is
   * past the always-dense entries — so before the first effective step `r = C`.
   *
   * @throws LetheError `E_STATE` naming `budget` when the episode is done (no step remains).
   */
  required(): AxisUsage {
    const remaining = this.remaining;
    if (remaining <= 0) {
      throw new LetheError('E_STATE', 'the episode is done: no step remains to steer', 'budget');
    }
    const effective = this.counted;
    const mean = this.realised() ?? this.targets;
    const axis = (a: number) =>
      (this.targets[a]! * (effective + remaining) - mean[a]! * effective) / remaining;
    return [axis(0), axis(1), axis(2)];
  }
}
