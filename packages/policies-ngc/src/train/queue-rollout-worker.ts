/**
 * The module a `lethe worker` runs a queued NGC rollout chunk with (built to
 * `dist/train-queue-rollout-worker.js`): its default export generates one
 * {@link NgcQueueRolloutJob} with the weights of its snapshot file, read once per thread and kept
 * until another file is asked for.
 *
 * @packageDocumentation
 */
import type { DecoderModel } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { collectRollouts } from './collect-rollouts';
import type { NgcQueueRolloutJob } from './queue-rollout-job';
import type { NgcRollout } from './rollout';
import { readSnapshotModel } from './snapshot-file';

// Started on import, awaited by every item: no top-level await, which the CJS build cannot hold.
const backend = initBackend('wasm');
let held: { readonly weights: string; readonly model: Promise<DecoderModel> } | undefined;

/** The chunk's rollouts, in request order, as `collectRollouts` gives them in one thread. */
export default async function queuedRollouts(job: NgcQueueRolloutJob): Promise<NgcRollout[]> {
  await backend;
  if (held?.weights !== job.weights) {
    const previous = held;
    held = { weights: job.weights, model: readSnapshotModel(job.weights, job.config) };
    previous?.model.then(
      (model) => model.dispose(),
      () => undefined,
    );
  }
  return collectRollouts(job.requests, { ...job.settings, model: await held.model });
}
