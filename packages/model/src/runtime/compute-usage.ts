import type { LayerControls } from '@lethe/kv-cache';
import { ACTIVATION_BITS_RANGE } from '../decoder/fake-quant';

/**
 * The compute one sequence's decode steps asked for, averaged over its steps and layers, in the
 * SOL paper's budget units: the token keep rate κ, the MLP input keep rate ρ and the normalised
 * precision `η = q / 16`; a layer without the control counts as dense (1).
 */
export interface ComputeUsage {
  /** Decode steps that asked a compute policy for controls. */
  readonly steps: number;
  /** Mean `tokenKeep` κ. */
  readonly tokenKeep: number;
  /** Mean `mlpInputKeep` ρ. */
  readonly mlpInputKeep: number;
  /** Mean `activationBits / 16`. */
  readonly precision: number;
}

/** Sums the controls of one sequence's decode steps into a {@link ComputeUsage}. */
export class ComputeUsageAccumulator {
  private steps = 0;
  private readonly sums = [0, 0, 0];

  /** Adds one step's controls (one entry per layer; undefined layers are dense). */
  add(controls: readonly (LayerControls | undefined)[]): void {
    if (controls.length === 0) return;
    const step = [0, 0, 0];
    for (const layer of controls) {
      step[0]! += layer?.tokenKeep ?? 1;
      step[1]! += layer?.mlpInputKeep ?? 1;
      step[2]! += (layer?.activationBits ?? ACTIVATION_BITS_RANGE.max) / ACTIVATION_BITS_RANGE.max;
    }
    for (let axis = 0; axis < 3; axis++) this.sums[axis]! += step[axis]! / controls.length;
    this.steps += 1;
  }

  /** The averages so far (all 1 before any step). */
  usage(): ComputeUsage {
    const mean = (axis: number) => (this.steps === 0 ? 1 : this.sums[axis]! / this.steps);
    return { steps: this.steps, tokenKeep: mean(0), mlpInputKeep: mean(1), precision: mean(2) };
  }
}
