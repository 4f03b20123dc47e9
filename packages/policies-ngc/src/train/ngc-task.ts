import type { StopConditions } from '@lethe/model';

/**
 * What NGC trains on: examples, prompts and a verifiable reward. A binding for a task family
 * (e.g. Countdown from `@lethe/eval`) implements it; the trainer knows nothing else about tasks.
 */
export interface NgcTask<E = unknown> {
  /** The example of training step `step`, prompt slot `index` (deterministic). */
  example(step: number, index: number): E;
  /**
   * Prompt tokens of `example` for rollouts at `evictionRate` (0: no eviction). A task trained
   * with budget-aware interoception (§5.3) appends `<eviction_rate>p%</eviction_rate>` here.
   */
  prompt(example: E, evictionRate: number): Int32Array;
  /** Outcome reward of a completion (generated tokens); must be finite. */
  reward(example: E, completion: Int32Array): number;
  /** When generation stops. */
  readonly stop: StopConditions;
}
