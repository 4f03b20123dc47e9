// Browser-safe: nothing here imports Node modules. The worker-thread pool lives in '../node'.

export { chunkStarts } from './chunk-starts';
export { InProcessRollouts } from './in-process-rollouts';
export {
  type PolicySnapshot,
  packSnapshot,
  type SnapshotEntry,
  unpackSnapshot,
} from './policy-snapshot';
export { RolloutError } from './rollout-error';
export type { RolloutFunction, RolloutRunner, RolloutTask } from './rollout-runner';
export { SnapshotCache, type SnapshotCacheOptions } from './snapshot-cache';
