/**
 * The full-cache model's score of every example seen so far, by task name and example key: each
 * is generated and scored once, then reused by every generation that samples the example again
 * (and kept in checkpoints).
 */
export class FullCacheScores {
  private readonly scores = new Map<string, Map<string, number>>();

  /** The cached scores of `json` ({@link FullCacheScores.toJSON}'s form). */
  static fromJSON(
    json: Readonly<Record<string, Readonly<Record<string, number>>>>,
  ): FullCacheScores {
    const cache = new FullCacheScores();
    for (const [task, scores] of Object.entries(json)) {
      for (const [key, score] of Object.entries(scores)) cache.set(task, key, score);
    }
    return cache;
  }

  /** The score of example `key` of `task`, or undefined when not computed yet. */
  get(task: string, key: string): number | undefined {
    return this.scores.get(task)?.get(key);
  }

  /** Records the score of example `key` of `task`. */
  set(task: string, key: string, score: number): void {
    let scores = this.scores.get(task);
    if (scores === undefined) {
      scores = new Map();
      this.scores.set(task, scores);
    }
    scores.set(key, score);
  }

  /** Every score, `{ task: { key: score } }`, tasks and keys in insertion order. */
  toJSON(): Record<string, Record<string, number>> {
    const json: Record<string, Record<string, number>> = {};
    for (const [task, scores] of this.scores) json[task] = Object.fromEntries(scores);
    return json;
  }
}
