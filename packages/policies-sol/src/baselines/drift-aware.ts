import { LetheError } from '@lethe/core';
import type { ComputeNeeds, StepObservation } from '@lethe/kv-cache';
import { cosineDrift } from './cosine-drift';
import { SteeredPolicy } from './steered-policy';

const NEEDS: ComputeNeeds = Object.freeze({ embedding: true });

/** The need score of a step with nothing to compare: ½, under which steering rounds to the nearest level. */
const NO_DRIFT_OBSERVED = 0.5;

/** What DAC remembers of a sequence's previous step. */
export interface DriftMemory {
  /** The final hidden state the previous step of this episode observed (undefined at an episode's start). */
  hidden: Float32Array | undefined;
  /** The input embedding of the token the previous step fed (undefined before the first step). */
  embedding: Float32Array | undefined;
}

/**
 * The Drift-Aware Criterion of the SOL paper's App. C: the need score of step `t` is the cosine
 * drift of consecutive final hidden states, `d_{t−1} = ½(1 − cos(h_{t−1}, h_{t−2}))`
 * ({@link cosineDrift}), so steps after a large change of representation get more compute, while
 * the greedy budget-steering rule keeps each episode on the targets (see `SteeredPolicy`).
 *
 * At the first step of an episode it uses the embedding drift `½(1 − cos(e(x_t), e(x_{t−1})))`
 * instead, as the paper does for the first decoded token: `h_{t−1}` is then the hidden state a
 * dense KV refresh recomputed while `h_{t−2}` was computed under compression, so their drift would
 * measure the refresh rather than the text. At a sequence's very first step neither previous
 * state was observed, and the score is ½ (no information: steering takes the level nearest the
 * required average). Both states are copied into the sequence's memory.
 *
 * @throws LetheError `E_ARG` from the constructor as `SteeredPolicy`'s.
 */
export class DriftAwarePolicy extends SteeredPolicy<DriftMemory> {
  readonly name = 'sol-dac';
  /** The input embedding of each step's token (for the episodes' first steps). */
  readonly needs: ComputeNeeds = NEEDS;

  protected createMemory(): DriftMemory {
    return { hidden: undefined, embedding: undefined };
  }

  /**
   * `d_{t−1}` (the embedding drift at an episode's start, ½ at the sequence's first step); keeps
   * this step's hidden state and embedding for the next.
   *
   * @throws LetheError `E_ARG` naming `observation.embedding` when the runtime did not provide
   *   it, or naming it or `observation.hidden` for non-finite values; `E_SHAPE` for a vector of
   *   another length than the previous step's.
   */
  protected need(observation: StepObservation, memory: DriftMemory, episodeStart: boolean): number {
    const { hidden, embedding } = observation;
    if (embedding === undefined) {
      throw new LetheError(
        'E_ARG',
        `is missing: ${this.name} needs { embedding: true }`,
        'observation.embedding',
      );
    }
    if (episodeStart) memory.hidden = undefined;
    let drift = NO_DRIFT_OBSERVED;
    if (memory.hidden !== undefined) {
      drift = cosineDrift(hidden, memory.hidden, ['observation.hidden', 'observation.hidden']);
    } else if (memory.embedding !== undefined) {
      drift = cosineDrift(embedding, memory.embedding, [
        'observation.embedding',
        'observation.embedding',
      ]);
    }
    memory.hidden = Float32Array.from(hidden);
    memory.embedding = Float32Array.from(embedding);
    return drift;
  }
}
