/**
 * `@lethe/policies-ngc/train/node`: the Node-only part of the trainer — rollouts on a pool of
 * worker threads ({@link workerPoolRollouts}) or on a Redis job queue for `lethe worker`
 * processes anywhere ({@link queueRollouts}).
 *
 * @packageDocumentation
 */

export type { NgcQueueRolloutJob } from './queue-rollout-job';
export {
  NGC_ROLLOUTS_KIND,
  type NgcQueueOptions,
  ngcRolloutsWorkerModule,
  queueRollouts,
} from './queue-rollouts';
export type { NgcRolloutJob } from './rollout-job';
export { type NgcWorkerPoolOptions, workerPoolRollouts } from './worker-pool-rollouts';
