import { LetheError } from '@lethe/core';
import type { RandomSource } from '@lethe/kv-cache';
import { SteeredPolicy } from './steered-policy';

/**
 * Random schedules at the requested budget: the budget-steering rule of EMC and DAC
 * (`SteeredPolicy`) fed a need score drawn uniformly from the sequence's random stream, so each
 * episode's average usage is steered to the targets while *when* compute is spent is random —
 * the uninformed control of the need-scored baselines, and the random search the SOL study runs
 * at matched budgets (the paper's random schedules draw actions uniformly whatever the targets,
 * `sol-random`, and are compared at matched realised net keep-rates; at targets far from the
 * action set's mean that leaves few matches).
 *
 * @throws LetheError `E_ARG` from the constructor as `SteeredPolicy`'s.
 */
export class RandomSteeredPolicy extends SteeredPolicy<undefined> {
  readonly name = 'sol-random-steered';

  protected createMemory(): undefined {
    return undefined;
  }

  /**
   * A uniform need score from `rng`.
   *
   * @throws LetheError `E_ARG` naming `rng` when it gives a number outside [0, 1).
   */
  protected need(_observation: unknown, _memory: undefined, _start: boolean, rng: RandomSource) {
    const uniform = rng.fillUniform(new Float32Array(1))[0]!;
    if (!(uniform >= 0 && uniform < 1)) {
      throw new LetheError('E_ARG', `must give uniforms in [0, 1), got ${uniform}`, 'rng');
    }
    return uniform;
  }
}
