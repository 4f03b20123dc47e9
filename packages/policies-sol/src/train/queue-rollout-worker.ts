/**
 * The module a `lethe worker` runs a queued SOL rollout chunk with (built to
 * `dist/train-queue-rollout-worker.js`): its default export runs one {@link SolQueueRolloutJob}
 * on the LM of its directory, read once per thread and kept.
 *
 * @packageDocumentation
 */
import { LetheError } from '@lethe/core';
import { type DecoderModel, modelIdentity } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { ActionSet } from '../actions/action-set';
import { SolController } from '../controller/sol-controller';
import { counterfactualRollouts, type RolloutGroup } from './counterfactual-rollout';
import type { SolQueueRolloutJob } from './queue-rollout-job';

interface HeldModel {
  readonly model: DecoderModel;
  readonly identity: string;
}

// Started on import, awaited by every item: no top-level await, which the CJS build cannot hold.
const backend = initBackend('wasm');
const models = new Map<string, Promise<HeldModel>>();

async function readModel(dir: string): Promise<HeldModel> {
  const { model } = await readModelDirectory(dir, { tokenizer: 'optional' });
  return { model, identity: await modelIdentity(model) };
}

/**
 * The chunk's groups, in input order, as `counterfactualRollouts` gives them in one thread.
 *
 * @throws LetheError `E_ARG` naming `modelDir` when the model there is not the trainer's.
 */
export default async function queuedSolRollouts(job: SolQueueRolloutJob): Promise<RolloutGroup[]> {
  await backend;
  let held = models.get(job.modelDir);
  if (held === undefined) {
    held = readModel(job.modelDir);
    models.set(job.modelDir, held);
    held.catch(() => models.delete(job.modelDir));
  }
  const { model, identity } = await held;
  if (identity !== job.modelIdentity) {
    throw new LetheError(
      'E_ARG',
      `holds the model ${identity}, but the trainer's is ${job.modelIdentity}`,
      'modelDir',
    );
  }
  return counterfactualRollouts(
    model,
    new SolController(job.controller),
    new ActionSet(job.actions),
    job.inputs,
    job.settings,
  );
}
