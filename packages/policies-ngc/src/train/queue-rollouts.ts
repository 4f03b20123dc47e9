import { assertInteger } from '@lethe/core';
import type { DecoderModel } from '@lethe/model';
import type { RunRequirements } from '@lethe/queue';
import { collectOnQueue, describeRequirements, runIdOf } from '@lethe/queue/node';
import { packSnapshot } from '@lethe/rl-grpo';
import type { CollectRolloutsOptions, RolloutRequest } from './collect-rollouts';
import type { RolloutFunction } from './group-batch';
import type { NgcQueueRolloutJob } from './queue-rollout-job';
import type { NgcRollout } from './rollout';
import { removeSnapshotFile, type SnapshotFile, writeSnapshotFile } from './snapshot-file';

/** The kind of item NGC rollouts are on the queue (`lethe-ngc-rollouts`). */
export const NGC_ROLLOUTS_KIND = 'ngc-rollouts';

/** The module a worker generates a chunk with: `dist/train-queue-rollout-worker.js`. */
export function ngcRolloutsWorkerModule(): URL {
  return new URL('./train-queue-rollout-worker.js', import.meta.url);
}

/** Options of {@link queueRollouts}. */
export interface NgcQueueOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /**
   * A directory every worker reads at the same path (relative ones resolve against each process's
   * working directory): each update's weights are written there, named by their hash.
   */
  readonly weightsDir: string;
  /** Requests per queued item, generated as one batch per eviction rate (default 4). */
  readonly requestsPerItem?: number;
  /** Hears each refusal a worker wrote (its packages or the weights file differ). */
  readonly onRefused?: (message: string) => void;
}

/**
 * A {@link RolloutFunction} on a Redis job queue (pass it as `NgcTrainer`'s `rollouts`): each call
 * writes the model's current weights to `weightsDir` (F32 safetensors named by their SHA-256) and
 * puts the requests on `lethe-ngc-rollouts` in chunks of `requestsPerItem`, which `lethe worker`
 * processes on any machine that reads `weightsDir` generate with `collectRollouts`. A rollout's
 * draws depend only on its stream id and the seed, and a chunk's rollouts do not depend on the
 * chunking, so the result equals `collectRollouts(requests, { ...settings, model })` in this
 * thread. The weights file's hash and the versions of `@lethe/policies-ngc` and the Lethe and tfjs
 * packages under it are the run's requirements; the run's id hashes them with the requests, so a
 * trainer resumed at the same update collects the chunks finished meanwhile. The previous call's
 * weights file is removed when a call writes another.
 *
 * @throws LetheError `E_ARG` naming `requestsPerItem` when it is not an integer ≥ 1; a call
 *   rejects with the errors of `runOnQueue` (`E_QUEUE` when a chunk failed on every try, with its
 *   worker's error, or Redis does not answer).
 * @example
 * ```ts
 * const rollouts = queueRollouts(model, { ngc, maxNewTokens, temperature, stop, seed }, { redis: 'redis://127.0.0.1:6379', weightsDir: 'runs/weights' });
 * const trainer = new NgcTrainer({ model, ngc, maxNewTokens, temperature, seed, rollouts, … });
 * await trainer.train();
 * ```
 */
export function queueRollouts(
  model: DecoderModel,
  settings: Omit<CollectRolloutsOptions, 'model'>,
  options: NgcQueueOptions,
): RolloutFunction {
  const perItem = assertInteger(options.requestsPerItem ?? 4, 'requestsPerItem', 1);
  let previous: SnapshotFile | undefined;
  /** The installation's part of the requirements (no files), read once. */
  let installed: RunRequirements | undefined;
  return async (requests: readonly RolloutRequest[], step: number) => {
    const weights = await writeSnapshotFile(
      options.weightsDir,
      await packSnapshot(model.parameters, step),
    );
    if (previous !== undefined && previous.path !== weights.path)
      await removeSnapshotFile(previous);
    previous = weights;
    installed ??= await describeRequirements({
      root: '@lethe/policies-ngc',
      from: ngcRolloutsWorkerModule(),
      files: [],
    });
    // The file's content hash is its bytes' SHA-256, computed as it was written: not read again.
    const requirements: RunRequirements = {
      ...installed,
      files: { [weights.path]: weights.sha256 },
    };
    const items: { key: string; payload: NgcQueueRolloutJob }[] = [];
    for (let start = 0; start < requests.length; start += perItem) {
      items.push({
        key: `r${start}`,
        payload: {
          config: model.config,
          weights: weights.path,
          settings,
          requests: requests.slice(start, start + perItem),
        },
      });
    }
    const chunks = await collectOnQueue<NgcQueueRolloutJob, NgcRollout[]>(items, {
      redis: options.redis,
      kind: NGC_ROLLOUTS_KIND,
      run: runIdOf({ requirements, items }),
      requirements,
      ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
    });
    return chunks.flat();
  };
}
