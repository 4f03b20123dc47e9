import type { DecoderModel } from '@lethe/model';
import { checkGenome } from './check-genome';
import {
  checkEvaluationSettings,
  type NammEvaluationSettings,
  nammPolicyFor,
} from './evaluation-settings';
import { generateCompletions } from './generate-completions';
import type { NammCompletion, NammPromptRequest } from './prompt-request';

/**
 * One evaluation of a population: every member completes every request. Plain data, so it
 * crosses threads by structured clone.
 */
export interface PopulationJob {
  /** Each member's genome, or `null` for the full-cache model (no eviction). */
  readonly genomes: readonly (Float64Array | null)[];
  /** The prompts every member completes. */
  readonly requests: readonly NammPromptRequest[];
  /** How the members run. */
  readonly settings: NammEvaluationSettings;
}

/**
 * Evaluates a population with a frozen model: the completions of member m, request r at
 * `[m][r]`. The default runs in this thread ({@link evaluatePopulation}); `workerPoolEvaluator`
 * of `@lethe/policies-namm/train/node` splits the members over worker threads with identical
 * results.
 */
export type PopulationEvaluator = (job: PopulationJob) => Promise<NammCompletion[][]>;

/**
 * Evaluates a population in this thread: each member (NAMM with its genome, or the full cache
 * for `null`) completes all the requests greedily as one `generate` batch
 * (`generateCompletions`), member after member. Completions depend only on the model, the
 * member and the requests.
 *
 * @throws LetheError `E_ARG` naming the bad setting (see `checkEvaluationSettings`),
 *   `genomes[m]` (wrong length or a non-finite value), or a request field (see
 *   `generateCompletions`).
 */
export async function evaluatePopulation(
  model: DecoderModel,
  job: PopulationJob,
): Promise<NammCompletion[][]> {
  checkEvaluationSettings(job.settings);
  job.genomes.forEach((genome, m) => {
    if (genome !== null) checkGenome(genome, job.settings.scorer, `genomes[${m}]`);
  });
  const out: NammCompletion[][] = [];
  for (const genome of job.genomes) {
    const policy = genome === null ? undefined : nammPolicyFor(job.settings, genome);
    out.push(await generateCompletions(model, job.requests, policy));
  }
  return out;
}
