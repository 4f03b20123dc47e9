import { LetheError } from '@lethe/core';
import type { LayerControls, RandomSource, StepObservation } from '@lethe/kv-cache';
import { type BudgetTargets, targetVector } from '../budget/budget-targets';
import { type BaselineOptions, BaselinePolicy } from './baseline-policy';
import { bracketLevels, type LevelBracket } from './level-bracket';
import { actionAt, usageLevels } from './usage-levels';

/** Options of {@link FixedSchedulePolicy}. */
export interface FixedScheduleOptions extends BaselineOptions {
  /** The requested per-axis budgets the batch's average is to match. */
  readonly targets: BudgetTargets;
}

/** One sequence's memory: its constant action, drawn at its first step. */
export interface FixedScheduleState {
  /** The action of every step of the sequence, or undefined before its first step. */
  action: number | undefined;
}

/**
 * The SOL paper's fixed baseline (§5): one static action, the same at every decode step of a
 * sequence. Per axis, a target that is a level (or outside the levels' range: the nearest
 * extreme) is that level; a target between two adjacent levels mixes them so that the average
 * matches it — the paper mixes them *across the batch*. Here each sequence draws its level from
 * its own random stream at its first step: the upper level with probability
 * `w = (C − lower) / (upper − lower)`, independently per axis, so the expected usage per axis is
 * exactly `C` and the batch average converges to it as the batch grows. This deviates from a
 * deterministic split by batch index (`round(n·w)` sequences on the upper level) so that a
 * sequence's schedule depends only on its own stream: run alone with the same stream id it gets
 * the same controls as in any batch. A small batch's realised average scatters around the target
 * by `(upper − lower)·√(w(1 − w)/n)` per axis.
 *
 * @throws LetheError `E_ARG` from the constructor as `BaselinePolicy`'s, naming
 *   `targets.<axis>` for a target that is not a finite number in [0, 1].
 */
export class FixedSchedulePolicy extends BaselinePolicy<FixedScheduleState> {
  readonly name = 'sol-fixed';
  private readonly brackets: readonly LevelBracket[];

  constructor(options: FixedScheduleOptions) {
    super(options);
    const targets = targetVector(options.targets);
    const levels = usageLevels(this.actions);
    this.brackets = [0, 1, 2].map((axis) => bracketLevels(levels[axis]!, targets[axis]!));
  }

  /** A fresh sequence: its action is drawn at its first step. */
  createState(): FixedScheduleState {
    return { action: undefined };
  }

  /**
   * The sequence's constant action for every layer; its first call draws the action (three
   * uniforms from `rng`, one per axis, whether or not the axis mixes).
   *
   * @throws LetheError `E_STATE` naming `state` without a state from {@link createState}.
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: FixedScheduleState,
  ): readonly (LayerControls | undefined)[] {
    if (state === undefined) {
      throw new LetheError(
        'E_STATE',
        'FixedSchedulePolicy needs the state of createState()',
        'state',
      );
    }
    state.action ??= this.draw(rng);
    return this.controlsOf(state.action, observation);
  }

  private draw(rng: RandomSource): number {
    const uniforms = rng.fillUniform(new Float32Array(3));
    const level = (axis: number) => {
      const { lower, upper, weight } = this.brackets[axis]!;
      return uniforms[axis]! < weight ? upper : lower;
    };
    return actionAt(this.actions, [level(0), level(1), level(2)]);
  }
}
