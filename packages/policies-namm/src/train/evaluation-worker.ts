/**
 * The module every thread of `workerPoolEvaluator` runs (built to
 * `dist/train-evaluation-worker.js`): its default export evaluates one {@link NammEvaluationJob}
 * with the weights of the task's snapshot.
 *
 * @packageDocumentation
 */
import { DecoderModel } from '@lethe/model';
import { type RolloutTask, SnapshotCache } from '@lethe/rl-grpo';
import { initBackend } from '@lethe/tensor';
import { evaluatePopulation } from './evaluate-population';
import type { NammEvaluationJob } from './evaluation-job';
import type { NammCompletion } from './prompt-request';

// Started on import, awaited by every task: no top-level await, which the CJS build cannot hold.
const backend = initBackend('wasm');
const models = new SnapshotCache<DecoderModel>({ dispose: (model) => model.dispose() });

/**
 * Evaluates the job's members with `evaluatePopulation` on the wasm backend. The model is built
 * from `snapshot` once per snapshot version and kept for the thread's later tasks.
 */
export default async function evaluationJob({
  request: job,
  snapshot,
}: RolloutTask<NammEvaluationJob>): Promise<NammCompletion[][]> {
  await backend;
  const model = models.get(snapshot, (arrays) =>
    DecoderModel.fromTensors(
      job.config,
      Object.fromEntries(
        snapshot.layout.map(({ name, shape }) => [
          name,
          { shape: [...shape], data: arrays.get(name)! },
        ]),
      ),
    ),
  );
  return evaluatePopulation(model, job);
}
