// A `lethe worker` for NAMM members in a process of its own, from the package's build:
// node member-worker.mjs <redis>.
import { startQueueWorker } from '@lethe/queue/node';
import { NAMM_MEMBER_KIND, nammMemberWorkerModule } from '../../../dist/train-node.js';

const worker = startQueueWorker({
  redis: process.argv[2],
  kinds: { [NAMM_MEMBER_KIND]: nammMemberWorkerModule() },
  lockMs: 5000,
  stalledCheckMs: 1000,
});
process.on('SIGTERM', () => void worker.close());
await worker.done;
