/**
 * The module a `lethe worker` runs a queued NAMM member with (built to
 * `dist/train-queue-member-worker.js`): its default export evaluates one {@link NammMemberJob}
 * on the model of its directory, read once per thread and kept.
 *
 * @packageDocumentation
 */
import type { DecoderModel } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { evaluatePopulation } from './evaluate-population';
import type { NammCompletion } from './prompt-request';
import type { NammMemberJob } from './queue-member-job';

// Started on import, awaited by every item: no top-level await, which the CJS build cannot hold.
const backend = initBackend('wasm');
const models = new Map<string, Promise<DecoderModel>>();

/** The member's completions of every request, as `evaluatePopulation` gives them in one thread. */
export default async function evaluateMember(job: NammMemberJob): Promise<NammCompletion[]> {
  await backend;
  let model = models.get(job.modelDir);
  if (model === undefined) {
    model = readModelDirectory(job.modelDir, { tokenizer: 'optional' }).then((dir) => dir.model);
    models.set(job.modelDir, model);
    model.catch(() => models.delete(job.modelDir));
  }
  const [completions] = await evaluatePopulation(await model, {
    genomes: [job.genome],
    requests: job.requests,
    settings: job.settings,
  });
  return completions!;
}
