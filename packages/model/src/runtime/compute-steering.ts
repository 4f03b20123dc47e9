import type { ComputePolicy, LayerControls, StepObservation } from '@lethe/kv-cache';
import type { Rng } from '@lethe/tensor';
import { type ComputeUsage, ComputeUsageAccumulator } from './compute-usage';

/**
 * One sequence's compute policy at work: the policy's per-sequence state
 * (`ComputePolicy.createState`, made here), its random stream, and the controls its decode steps
 * ran with, averaged ({@link ComputeUsage}).
 */
export class ComputeSteering {
  private readonly state: unknown;
  private readonly accumulator = new ComputeUsageAccumulator();

  /**
   * @param policy the sequence's compute policy.
   * @param rng its random stream for this sequence.
   */
  constructor(
    readonly policy: ComputePolicy,
    private readonly rng: Rng,
  ) {
    this.state = policy.createState?.();
  }

  /**
   * The controls of the next decode step, one entry per layer.
   *
   * @throws the policy's errors.
   */
  controls(observation: StepObservation): readonly (LayerControls | undefined)[] {
    return this.policy.controls(observation, this.rng, this.state);
  }

  /** Counts a decode step that ran with `controls`. */
  record(controls: readonly (LayerControls | undefined)[]): void {
    this.accumulator.add(controls);
  }

  /** The realised per-axis averages so far. */
  usage(): ComputeUsage {
    return this.accumulator.usage();
  }
}
