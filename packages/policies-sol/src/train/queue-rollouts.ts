import { assertInteger } from '@lethe/core';
import { type DecoderModel, modelIdentity } from '@lethe/model';
import type { RunRequirements } from '@lethe/queue';
import { collectOnQueue, describeRequirements, runIdOf } from '@lethe/queue/node';
import type { RolloutGroup } from './counterfactual-rollout';
import type { SolQueueRolloutJob } from './queue-rollout-job';
import type { SolRolloutFunction, SolRolloutRequest } from './rollout-function';

/** The kind of item SOL rollouts are on the queue (`lethe-sol-rollouts`). */
export const SOL_ROLLOUTS_KIND = 'sol-rollouts';

/** The module a worker runs a chunk with: `dist/train-queue-rollout-worker.js`. */
export function solRolloutsWorkerModule(): URL {
  return new URL('./train-queue-rollout-worker.js', import.meta.url);
}

/** Options of {@link queueSolRollouts}. */
export interface SolQueueOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /** Inputs per queued item, each with its `K` schedules run as one batch (default 1). */
  readonly inputsPerItem?: number;
  /** Hears each refusal a worker wrote (its packages or the model's files differ). */
  readonly onRefused?: (message: string) => void;
}

/**
 * A {@link SolRolloutFunction} on a Redis job queue (pass it as `SolTrainer`'s `rollouts`): each
 * update's inputs go on `lethe-sol-rollouts` in chunks of `inputsPerItem`, with the controller's
 * parameters, for `lethe worker` processes on any machine that reads the frozen LM at `modelDir`
 * (the directory `model` was read from: its content hash and the versions of
 * `@lethe/policies-sol` and the Lethe and tfjs packages under it are the run's requirements, and
 * a worker whose model there has another `modelIdentity` than `model` fails the item). A
 * schedule's draws depend only on its stream id and the seed, and an input's schedules do not
 * depend on the other inputs of their batch, so the result equals
 * `counterfactualRollouts(model, …)` in this thread. An update's run id hashes its items and
 * requirements: a trainer resumed at the same update collects the chunks finished meanwhile.
 *
 * @throws LetheError `E_ARG` naming `inputsPerItem` when it is not an integer ≥ 1; a call rejects
 *   with the errors of `runOnQueue` (`E_QUEUE` when a chunk failed on every try, with its
 *   worker's error, or Redis does not answer).
 * @example
 * ```ts
 * const rollouts = queueSolRollouts(model, 'models/lm', { redis: 'redis://127.0.0.1:6379' });
 * const trainer = new SolTrainer({ model, actions, controller, documents, updates, rollouts });
 * await trainer.train();
 * ```
 */
export function queueSolRollouts(
  model: DecoderModel,
  modelDir: string,
  options: SolQueueOptions,
): SolRolloutFunction {
  const perItem = assertInteger(options.inputsPerItem ?? 1, 'inputsPerItem', 1);
  let ready: Promise<{ identity: string; requirements: RunRequirements }> | undefined;
  return async ({ controller, actions, inputs, settings }: SolRolloutRequest) => {
    ready ??= Promise.all([
      modelIdentity(model),
      describeRequirements({
        root: '@lethe/policies-sol',
        from: solRolloutsWorkerModule(),
        files: [modelDir],
      }),
    ]).then(([identity, requirements]) => ({ identity, requirements }));
    const { identity, requirements } = await ready;
    const firstStream = settings.firstStream ?? 0;
    const items: { key: string; payload: SolQueueRolloutJob }[] = [];
    for (let start = 0; start < inputs.length; start += perItem) {
      items.push({
        key: `i${start}`,
        payload: {
          modelDir,
          modelIdentity: identity,
          controller,
          actions: actions.levels,
          inputs: inputs.slice(start, start + perItem),
          settings: { ...settings, firstStream: firstStream + start * settings.groupSize },
        },
      });
    }
    const chunks = await collectOnQueue<SolQueueRolloutJob, RolloutGroup[]>(items, {
      redis: options.redis,
      kind: SOL_ROLLOUTS_KIND,
      run: runIdOf({ requirements, items }),
      requirements,
      ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
    });
    return chunks.flat();
  };
}
