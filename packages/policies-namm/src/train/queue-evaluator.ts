import type { RunRequirements } from '@lethe/queue';
import { collectOnQueue, describeRequirements, runIdOf } from '@lethe/queue/node';
import type { PopulationEvaluator, PopulationJob } from './evaluate-population';
import type { NammCompletion } from './prompt-request';
import type { NammMemberJob } from './queue-member-job';

/** The kind of item a NAMM generation's members are on the queue (`lethe-namm-member`). */
export const NAMM_MEMBER_KIND = 'namm-member';

/** The module a worker evaluates a member with: `dist/train-queue-member-worker.js`. */
export function nammMemberWorkerModule(): URL {
  return new URL('./train-queue-member-worker.js', import.meta.url);
}

/** Options of {@link queueEvaluator}. */
export interface NammQueueOptions {
  /** The Redis server, `redis://host:port[/db]`. */
  readonly redis: string;
  /** Hears each refusal a worker wrote (its packages or model files differ from this run's). */
  readonly onRefused?: (message: string) => void;
}

/**
 * A {@link PopulationEvaluator} on a Redis job queue (pass it as `NammEvolution`'s `evaluate`):
 * each member of a generation is one job on `lethe-namm-member`, taken by `lethe worker`
 * processes on any machine that reads the model at `modelDir` (the directory the evolution's
 * model was read from: its content hash and the versions of `@lethe/policies-namm` and the Lethe
 * and tfjs packages under it are the run's requirements). A completion depends only on the model,
 * the member and the requests, so the result equals `evaluatePopulation(model, job)` in one
 * thread on the wasm backend. A generation's run id hashes its job and requirements: an
 * evolution resumed from its checkpoint after its process was killed asks for the same
 * generation again and collects the members finished meanwhile.
 *
 * The worker's module is `dist/train-queue-member-worker.js` next to this module's build.
 *
 * @throws the errors of `runOnQueue` (`E_QUEUE` when a member failed on every try or Redis does
 *   not answer; `E_ARG` naming `redis`).
 * @example
 * ```ts
 * const evaluate = queueEvaluator('models/retrieval', { redis: 'redis://127.0.0.1:6379' });
 * const evolution = new NammEvolution({ model, evaluate, … });
 * await evolution.train();
 * ```
 */
export function queueEvaluator(modelDir: string, options: NammQueueOptions): PopulationEvaluator {
  let requirements: Promise<RunRequirements> | undefined;
  return async (job: PopulationJob) => {
    requirements ??= describeRequirements({
      root: '@lethe/policies-namm',
      from: nammMemberWorkerModule(),
      files: [modelDir],
    });
    const required = await requirements;
    const items = job.genomes.map((genome, m) => ({
      key: `m${m}`,
      payload: {
        modelDir,
        genome,
        requests: job.requests,
        settings: job.settings,
      } satisfies NammMemberJob,
    }));
    return collectOnQueue<NammMemberJob, NammCompletion[]>(items, {
      redis: options.redis,
      kind: NAMM_MEMBER_KIND,
      run: runIdOf({ required, job: items.map((item) => item.payload) }),
      requirements: required,
      ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
    });
  };
}
