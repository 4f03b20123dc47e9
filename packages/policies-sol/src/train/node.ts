/**
 * `@lethe/policies-sol/train/node`: the Node-only part of the trainer — an update's
 * counterfactual schedules on a Redis job queue for `lethe worker` processes anywhere
 * ({@link queueSolRollouts}).
 *
 * @packageDocumentation
 */

export type { SolQueueRolloutJob } from './queue-rollout-job';
export {
  queueSolRollouts,
  SOL_ROLLOUTS_KIND,
  type SolQueueOptions,
  solRolloutsWorkerModule,
} from './queue-rollouts';
