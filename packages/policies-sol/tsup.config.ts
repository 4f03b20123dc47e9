import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference controller (`.`, plain typed arrays, no tensor library), its tfjs twin and the
// trainer (`./train`), the trainer's Node-only queue rollouts (`./train/node`) and the module a
// queue's workers run (`train-queue-rollout-worker.js`, found next to `train-node.js`); splitting
// keeps one copy of the modules they share.
export default defineConfig(
  packageBuild(
    {
      index: 'src/index.ts',
      train: 'src/train/index.ts',
      'train-node': 'src/train/node.ts',
      'train-queue-rollout-worker': 'src/train/queue-rollout-worker.ts',
    },
    { splitting: true },
  ),
);
