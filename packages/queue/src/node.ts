/**
 * The Node-only part of `@lethe/queue`: the coordinator (`runOnQueue`, `collectOnQueue`), the worker
 * (`startQueueWorker`) and how a run's requirements are read and checked.
 *
 * @packageDocumentation
 */
export { collectOnQueue } from './collect-on-queue';
export { contentHash } from './content-hash';
export {
  describeRequirements,
  RequirementChecker,
  type RequirementSources,
} from './describe-requirements';
export { dependencyVersions } from './package-versions';
export { type QueueItem, type QueueRunOptions, runOnQueue } from './queue-coordinator';
export {
  type QueueWorkerEvent,
  type QueueWorkerHandle,
  type QueueWorkerOptions,
  startQueueWorker,
} from './queue-worker';
export { runIdOf } from './run-id';
