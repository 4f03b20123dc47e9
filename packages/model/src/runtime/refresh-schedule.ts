/**
 * When one sequence's KV refresh is due (SOL §4, a compute policy's `refreshEvery = T`): the
 * tokens its decode steps fed since its last refresh, and how many refreshes it ran.
 */
export class RefreshSchedule {
  private fed: number[] = [];
  private count = 0;

  /** @param every `T`, decode steps between refreshes (a positive integer, checked by the caller). */
  constructor(readonly every: number) {}

  /** Refreshes run so far. */
  get refreshes(): number {
    return this.count;
  }

  /** Records the token a decode step fed; whether this step brings the sequence to its refresh. */
  feed(token: number): boolean {
    this.fed.push(token);
    return this.fed.length === this.every;
  }

  /** The `T` tokens to prefill again; the next period starts. */
  take(): Int32Array {
    const tokens = Int32Array.from(this.fed);
    this.fed = [];
    return tokens;
  }

  /** Counts a refresh that ran. */
  completed(): void {
    this.count += 1;
  }
}
