/** One progress report of a training run, sent after every update. */
export interface TrainProgress {
  /** Updates completed so far (1 after the first update), counting those before a resume. */
  readonly step: number;
  /** Updates the run will make in total. */
  readonly totalSteps: number;
  /** Loss of this update's batch (before the update). */
  readonly loss: number;
  /** Learning rate this update used. */
  readonly lr: number;
  /** Global L2 norm of this update's gradients, before clipping. */
  readonly gradNorm: number;
  /** Trained tokens per second since this `train()` call started (0 until the clock advances). */
  readonly tokensPerSecond: number;
  /** Seconds since this `train()` call started. */
  readonly elapsedSeconds: number;
  /** Estimated seconds until `totalSteps`, from the mean update time of this call. */
  readonly etaSeconds: number;
}

/** The per-update numbers a trainer measures; {@link ProgressMeter} adds rates and times. */
export type UpdateMeasurement = Pick<TrainProgress, 'step' | 'loss' | 'lr' | 'gradNorm'> & {
  /** Trained tokens in this update's batch. */
  readonly tokens: number;
};

/**
 * Turns per-update measurements into {@link TrainProgress} reports: throughput and ETA are
 * averaged over the updates since the meter was created (one `train()` call), so a resumed run
 * reports its own speed.
 */
export class ProgressMeter {
  private readonly startedAt: number;
  private readonly firstStep: number;
  private tokens = 0;

  /**
   * @param totalSteps updates of the whole run.
   * @param firstStep updates already completed when this meter starts.
   * @param now clock in milliseconds.
   */
  constructor(
    private readonly totalSteps: number,
    firstStep: number,
    private readonly now: () => number,
  ) {
    this.startedAt = now();
    this.firstStep = firstStep;
  }

  /** Records one completed update and returns its report. */
  report(update: UpdateMeasurement): TrainProgress {
    this.tokens += update.tokens;
    const elapsedSeconds = (this.now() - this.startedAt) / 1000;
    const updates = update.step - this.firstStep;
    const secondsPerUpdate = elapsedSeconds / updates;
    return {
      step: update.step,
      totalSteps: this.totalSteps,
      loss: update.loss,
      lr: update.lr,
      gradNorm: update.gradNorm,
      tokensPerSecond: elapsedSeconds > 0 ? this.tokens / elapsedSeconds : 0,
      elapsedSeconds,
      etaSeconds: secondsPerUpdate * (this.totalSteps - update.step),
    };
  }
}
