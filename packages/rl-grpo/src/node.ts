/**
 * `@lethe/rl-grpo/node`: the Node-only part — rollouts on a pool of worker threads.
 *
 * @packageDocumentation
 */
export {
  type WorkerPoolOptions,
  WorkerPoolRollouts,
} from './rollout/worker-pool-rollouts';
