// A `lethe worker` for SOL rollouts in a process of its own, from the package's build:
// node rollout-worker.mjs <redis>.
import { startQueueWorker } from '@lethe/queue/node';
import { SOL_ROLLOUTS_KIND, solRolloutsWorkerModule } from '../../../dist/train-node.js';

const worker = startQueueWorker({
  redis: process.argv[2],
  kinds: { [SOL_ROLLOUTS_KIND]: solRolloutsWorkerModule() },
  lockMs: 5000,
  stalledCheckMs: 1000,
});
process.on('SIGTERM', () => void worker.close());
await worker.done;
