import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference policy, the trainer (`@lethe/policies-ngc/train`), its Node-only worker pool and
// queue rollouts (`@lethe/policies-ngc/train/node`), the module the pool's threads run, which the
// pool finds next to itself as `train-rollout-worker.js`, and the one a queue's workers run
// (`train-queue-rollout-worker.js`); splitting keeps one copy of the modules they share.
export default defineConfig(
  packageBuild(
    {
      index: 'src/index.ts',
      train: 'src/train/index.ts',
      'train-node': 'src/train/node.ts',
      'train-rollout-worker': 'src/train/rollout-worker.ts',
      'train-queue-rollout-worker': 'src/train/queue-rollout-worker.ts',
    },
    { splitting: true },
  ),
);
