/**
 * `@lethe/policies-namm/train/node`: the Node-only part of the NAMM trainer — population
 * evaluation on a pool of worker threads ({@link workerPoolEvaluator}) or on a Redis job queue
 * for `lethe worker` processes anywhere ({@link queueEvaluator}), and atomic checkpoint
 * files ({@link writeNammCheckpoint}, {@link readNammCheckpoint}). An evolved scorer is written as
 * a policy directory by `writePolicyDirectory` of `@lethe/model/node` over `nammPolicyContents`.
 *
 * @packageDocumentation
 */
export { readNammCheckpoint, writeNammCheckpoint } from './checkpoint-file';
export type { NammEvaluationJob } from './evaluation-job';
export {
  NAMM_MEMBER_KIND,
  type NammQueueOptions,
  nammMemberWorkerModule,
  queueEvaluator,
} from './queue-evaluator';
export type { NammMemberJob } from './queue-member-job';
export { type NammWorkerPoolOptions, workerPoolEvaluator } from './worker-pool-evaluator';
