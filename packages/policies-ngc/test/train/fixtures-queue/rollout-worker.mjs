// A `lethe worker` for NGC rollouts in a process of its own, from the package's build:
// node rollout-worker.mjs <redis>.
import { startQueueWorker } from '@lethe/queue/node';
import { NGC_ROLLOUTS_KIND, ngcRolloutsWorkerModule } from '../../../dist/train-node.js';

const worker = startQueueWorker({
  redis: process.argv[2],
  kinds: { [NGC_ROLLOUTS_KIND]: ngcRolloutsWorkerModule() },
  lockMs: 5000,
  stalledCheckMs: 1000,
});
process.on('SIGTERM', () => void worker.close());
await worker.done;
