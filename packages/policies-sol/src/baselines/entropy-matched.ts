import { LetheError } from '@lethe/core';
import type { ComputeNeeds, StepObservation } from '@lethe/kv-cache';
import { normalisedEntropy } from './normalised-entropy';
import { SteeredPolicy } from './steered-policy';

const NEEDS: ComputeNeeds = Object.freeze({ embedding: false, logits: true });

/**
 * The Entropy-Matched Criterion of the SOL paper's App. C: the need score of a step is the
 * normalised entropy `Ĥ_{t−1}` of the previous step's next-token distribution
 * ({@link normalisedEntropy} of `StepObservation.logits`, which its `needs.logits` asks the
 * runtime for), so uncertain steps get less aggressive compression, while the greedy
 * budget-steering rule keeps each episode on the targets (see `SteeredPolicy`).
 *
 * @throws LetheError `E_ARG` from the constructor as `SteeredPolicy`'s.
 */
export class EntropyMatchedPolicy extends SteeredPolicy<undefined> {
  readonly name = 'sol-emc';
  /** The previous step's logits (and no embedding). */
  readonly needs: ComputeNeeds = NEEDS;

  protected createMemory(): undefined {
    return undefined;
  }

  /**
   * `Ĥ_{t−1}` of `observation.logits`.
   *
   * @throws LetheError `E_ARG` naming `observation.logits` when the runtime gave none or they are
   *   not valid logits.
   */
  protected need(observation: StepObservation): number {
    const { logits } = observation;
    if (logits === undefined) {
      throw new LetheError(
        'E_ARG',
        `is missing: ${this.name} needs the previous step's logits ({ logits: true })`,
        'observation.logits',
      );
    }
    return normalisedEntropy(logits, 'observation.logits');
  }
}
