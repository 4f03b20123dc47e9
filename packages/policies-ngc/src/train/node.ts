/**
 * `@lethe/policies-ngc/train/node`: the Node-only part of the trainer — rollouts on a pool of
 * worker threads ({@link workerPoolRollouts}).
 *
 * @packageDocumentation
 */
export type { NgcRolloutJob } from './rollout-job';
export { type NgcWorkerPoolOptions, workerPoolRollouts } from './worker-pool-rollouts';
