import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference policy (`.`, no tensor library), the CMA-ES trainer (`./train`), its Node-only
// worker pool, queue evaluator and file writers (`./train/node`), the module the pool's threads
// run, which the pool finds next to itself as `train-evaluation-worker.js`, and the one a queue's
// workers run (`train-queue-member-worker.js`); splitting keeps one copy of the modules they share.
export default defineConfig(
  packageBuild(
    {
      index: 'src/index.ts',
      train: 'src/train/index.ts',
      'train-node': 'src/train/node.ts',
      'train-evaluation-worker': 'src/train/evaluation-worker.ts',
      'train-queue-member-worker': 'src/train/queue-member-worker.ts',
    },
    { splitting: true },
  ),
);
