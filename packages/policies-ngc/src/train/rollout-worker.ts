/**
 * The module every thread of `workerPoolRollouts` runs (built to `dist/train-rollout-worker.js`):
 * its default export generates one {@link NgcRolloutJob} with the weights of the task's snapshot.
 *
 * @packageDocumentation
 */
import { DecoderModel } from '@lethe/model';
import { type PolicySnapshot, type RolloutTask, SnapshotCache } from '@lethe/rl-grpo';
import { initBackend } from '@lethe/tensor';
import { collectRollouts } from './collect-rollouts';
import type { NgcRollout } from './rollout';
import type { NgcRolloutJob } from './rollout-job';

// Started on import, awaited by every task: no top-level await, which the CJS build cannot hold.
const backend = initBackend('wasm');
const models = new SnapshotCache<DecoderModel>({ dispose: (model) => model.dispose() });

/**
 * Generates the job's rollouts, in request order, with `collectRollouts` on the wasm backend.
 * The model is built from `snapshot` once per snapshot version and kept (the previous one
 * disposed) for the thread's later tasks, so the version must change whenever the weights do.
 */
export default async function rolloutJob({
  request: job,
  snapshot,
}: RolloutTask<NgcRolloutJob>): Promise<NgcRollout[]> {
  await backend;
  const model = models.get(snapshot, (arrays) => modelFrom(job, snapshot, arrays));
  return collectRollouts(job.requests, { ...job.settings, model });
}

function modelFrom(
  job: NgcRolloutJob,
  snapshot: PolicySnapshot,
  arrays: Map<string, Float32Array>,
): DecoderModel {
  return DecoderModel.fromTensors(
    job.config,
    Object.fromEntries(
      snapshot.layout.map(({ name, shape }) => [
        name,
        { shape: [...shape], data: arrays.get(name)! },
      ]),
    ),
  );
}
