/**
 * `@lethe/policies-namm/train/node`: the Node-only part of the NAMM trainer — population
 * evaluation on a pool of worker threads ({@link workerPoolEvaluator}), atomic checkpoint files
 * ({@link writeNammCheckpoint}, {@link readNammCheckpoint}) and policy directories
 * ({@link writeNammPolicyDirectory}).
 *
 * @packageDocumentation
 */
export { readNammCheckpoint, writeNammCheckpoint } from './checkpoint-file';
export type { NammEvaluationJob } from './evaluation-job';
export { type NammManifestOptions, writeNammPolicyDirectory } from './policy-directory-writer';
export { type NammWorkerPoolOptions, workerPoolEvaluator } from './worker-pool-evaluator';
