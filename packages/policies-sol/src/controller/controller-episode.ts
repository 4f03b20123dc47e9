/**
 * The per-episode state of a SOL controller: its own KV cache — the attention keys and values
 * of the episode's steps so far — and the number of steps taken. One per sequence (sequences of
 * a batch never share one); made by `SolController.newEpisode()` and advanced only by
 * `SolController.step`. The paper resets it at the start of every episode (§4): take a new one,
 * or {@link ControllerEpisode.reset} this one to reuse its buffers.
 */
export class ControllerEpisode {
  /** Keys `[maxHorizon, width]`; rows `< steps` are this episode's. */
  readonly keys: Float32Array;
  /** Values `[maxHorizon, width]`; rows `< steps` are this episode's. */
  readonly values: Float32Array;
  private taken = 0;

  /**
   * @param width the controller's width.
   * @param maxHorizon the most steps the episode may take.
   */
  constructor(
    readonly width: number,
    readonly maxHorizon: number,
  ) {
    this.keys = new Float32Array(maxHorizon * width);
    this.values = new Float32Array(maxHorizon * width);
  }

  /** Steps taken in this episode: the next step is `steps + 1` (1-based). */
  get steps(): number {
    return this.taken;
  }

  /** Marks the row `steps` of {@link keys} and {@link values} as written (`SolController.step`). */
  advance(): void {
    this.taken += 1;
  }

  /** Starts a new episode in place: no step taken, the buffers reused. */
  reset(): void {
    this.taken = 0;
  }
}
