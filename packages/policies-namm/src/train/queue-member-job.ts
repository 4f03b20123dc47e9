import type { NammEvaluationSettings } from './evaluation-settings';
import type { NammPromptRequest } from './prompt-request';

/**
 * One queued item of a NAMM generation (`queueEvaluator`): one member completing every request
 * on the model read from `modelDir`, a path as the worker's working directory resolves it.
 */
export interface NammMemberJob {
  /** The frozen model's checkpoint directory; its contents are part of the run's requirements. */
  readonly modelDir: string;
  /** The member's genome, or `null` for the full-cache model. */
  readonly genome: Float64Array | null;
  readonly requests: readonly NammPromptRequest[];
  readonly settings: NammEvaluationSettings;
}
