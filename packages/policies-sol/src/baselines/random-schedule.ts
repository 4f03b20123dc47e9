import { LetheError } from '@lethe/core';
import type { LayerControls, RandomSource, StepObservation } from '@lethe/kv-cache';
import { BaselinePolicy } from './baseline-policy';

/**
 * The SOL paper's random counterfactual schedules (App. A, Figs. 8–9, 11): at every decode step
 * an action drawn uniformly from the action set with the sequence's random stream, independent
 * of the requested targets — a schedule's realised net keep rate is whatever it draws, and an
 * evaluation compares random schedules with the policy at matched realised net keep rate (e.g.
 * the best of N). Stateless: a sequence's schedule depends only on its stream.
 *
 * @throws LetheError `E_ARG` from the constructor as `BaselinePolicy`'s.
 */
export class RandomSchedulePolicy extends BaselinePolicy<undefined> {
  readonly name = 'sol-random';

  /**
   * A uniformly drawn action (one uniform from `rng`) for every layer.
   *
   * @throws LetheError `E_ARG` naming `rng` when it gives a number outside [0, 1).
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
  ): readonly (LayerControls | undefined)[] {
    const uniform = rng.fillUniform(new Float32Array(1))[0]!;
    if (!(uniform >= 0 && uniform < 1)) {
      throw new LetheError('E_ARG', `must give uniforms in [0, 1), got ${uniform}`, 'rng');
    }
    return this.controlsOf(Math.floor(uniform * this.actions.size), observation);
  }
}
