import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';

/**
 * A learning-rate schedule: a pure function from the 0-based index of an optimizer update to
 * the learning rate used by that update. Schedules throw `E_ARG` for a step outside their range,
 * so a trainer can check its whole run up front by asking for its last step.
 */
export type LrSchedule = (step: number) => number;

/** Options shared by the warmup-then-decay schedules. */
export interface WarmupDecayOptions {
  /** Learning rate reached at the end of warmup (> 0). */
  readonly peakLr: number;
  /** Number of warmup updates (integer ≥ 0); 0 starts decaying at step 0. */
  readonly warmupSteps: number;
  /** Total number of updates of the run (integer > warmupSteps); valid steps are [0, totalSteps). */
  readonly totalSteps: number;
  /** The decay ends at `minLrRatio · peakLr` (in [0, 1]; default 0). */
  readonly minLrRatio?: number;
}

/**
 * The same learning rate at every step.
 *
 * @example
 * ```ts
 * const schedule = constantSchedule(3e-4);
 * schedule(0) === schedule(10_000); // true
 * ```
 */
export function constantSchedule(lr: number): LrSchedule {
  assertPositive(lr, 'lr');
  return (step) => {
    assertInteger(step, 'step', 0);
    return lr;
  };
}

/**
 * Linear warmup to `peakLr`, then half-cosine decay to `minLrRatio · peakLr`.
 *
 * Warmup: `lr(s) = peakLr · (s + 1) / warmupSteps` for `s < warmupSteps`, so the first update
 * already moves (Hugging Face's variant starts at 0) and step `warmupSteps − 1` uses `peakLr`.
 * Decay: with `p = (s − warmupSteps) / (totalSteps − warmupSteps)` in [0, 1),
 * `lr(s) = min + (peakLr − min) · ½(1 + cos πp)`.
 *
 * @example
 * ```ts
 * const schedule = warmupCosineSchedule({ peakLr: 1e-3, warmupSteps: 10, totalSteps: 110 });
 * schedule(9);  // 1e-3
 * schedule(60); // 5e-4
 * ```
 */
export function warmupCosineSchedule(options: WarmupDecayOptions): LrSchedule {
  return warmupDecay(options, (p) => 0.5 * (1 + Math.cos(Math.PI * p)));
}

/**
 * Linear warmup to `peakLr` (as in {@link warmupCosineSchedule}), then linear decay
 * `lr(s) = min + (peakLr − min) · (1 − p)` with `p = (s − warmupSteps) / (totalSteps − warmupSteps)`.
 *
 * @example
 * ```ts
 * const schedule = warmupLinearSchedule({ peakLr: 1e-3, warmupSteps: 0, totalSteps: 100 });
 * schedule(50); // 5e-4
 * ```
 */
export function warmupLinearSchedule(options: WarmupDecayOptions): LrSchedule {
  return warmupDecay(options, (p) => 1 - p);
}

/** Builds a warmup + decay schedule from a decay shape mapping progress [0, 1) to a factor. */
function warmupDecay(options: WarmupDecayOptions, shape: (progress: number) => number): LrSchedule {
  const { peakLr, warmupSteps, totalSteps, minLrRatio = 0 } = options;
  assertPositive(peakLr, 'peakLr');
  assertInteger(warmupSteps, 'warmupSteps', 0);
  assertInteger(totalSteps, 'totalSteps', warmupSteps + 1);
  assertFiniteInRange(minLrRatio, 'minLrRatio', 0, 1);
  const minLr = minLrRatio * peakLr;
  return (step) => {
    assertInteger(step, 'step', 0);
    if (step >= totalSteps) {
      throw new LetheError('E_ARG', `must be < totalSteps (${totalSteps}), got ${step}`, 'step');
    }
    if (step < warmupSteps) return (peakLr * (step + 1)) / warmupSteps;
    const progress = (step - warmupSteps) / (totalSteps - warmupSteps);
    return minLr + (peakLr - minLr) * shape(progress);
  };
}

function assertPositive(value: number, argument: string): void {
  assertFiniteInRange(value, argument);
  if (value <= 0) throw new LetheError('E_ARG', `must be > 0, got ${value}`, argument);
}
