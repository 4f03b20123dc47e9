import type { StopConditions } from '@lethe/model';

/**
 * What NAMM evolves on: examples, prompts and a task metric. A binding for a task family
 * implements it; the trainer knows nothing else about tasks. Fitness divides a member's mean
 * score by the full-cache model's on the same prompts, so the metric should be ≥ 0 with higher
 * better (accuracy, F1, ROUGE-L).
 */
export interface NammTask<E = unknown> {
  /** Unique name; stages list their tasks by it, and the history reports per-task scores under it. */
  readonly name: string;
  /** The example of generation `generation` (0-based, counted over all stages), slot `index` (deterministic). */
  example(generation: number, index: number): E;
  /**
   * A stable identity of `example` within the task (e.g. its index in the task's data set): the
   * full-cache model's score is computed once per key and cached, in checkpoints too.
   */
  key(example: E): string;
  /** Prompt tokens of `example`. */
  prompt(example: E): Int32Array;
  /** The task metric of a completion (the generated tokens); must be finite, else the member's fitness is NaN. */
  score(example: E, completion: Int32Array): number;
  /** When generation stops. */
  readonly stop: StopConditions;
  /** Most tokens generated per prompt. */
  readonly maxNewTokens: number;
  /**
   * What makes the task's examples and scores what they are (e.g. its registry name and options
   * as JSON). A checkpoint records it by task name, and resuming with another definition of a
   * task that has run is refused: the full-cache scores it keeps would belong to other examples.
   * Omitted: no check.
   */
  readonly definition?: string;
}
