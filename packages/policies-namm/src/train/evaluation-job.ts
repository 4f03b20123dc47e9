import type { ModelConfig } from '@lethe/model';
import type { PopulationJob } from './evaluate-population';

/**
 * One task of the NAMM evaluation worker (`workerPoolEvaluator`): a contiguous run of members,
 * each completing every request, with the model built from the task's snapshot. Plain data, so
 * it crosses threads by structured clone.
 */
export interface NammEvaluationJob extends PopulationJob {
  /** Configuration of the model the snapshot's weights belong to. */
  readonly config: ModelConfig;
}
