import type { DecoderModel } from '@lethe/model';
import { identityNormalization } from '../../src/features/token-features';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';
import type { PopulationEvaluator, PopulationJob } from '../../src/train/evaluate-population';
import type { NammEvolutionOptions } from '../../src/train/namm-evolution-options';
import type { NammTask } from '../../src/train/namm-task';

/** An 81-parameter MLP over the age features: CMA-ES on it takes microseconds. */
export const AGE_MLP: ScorerSpec = { kind: 'mlp', features: 8, depth: 1 };

/** Marks the full-cache model's completions: `[FULL, example id]`. */
export const FULL = -1;

/** An example of a fake task: its id is its prompt's only token. */
export interface FakeExample {
  readonly id: number;
}

/**
 * A task for the fake evaluator: generation g slot i draws example `(g + i) mod 4`; a
 * completion `[member, id]` scores `member(member, id)` and the full cache's `[FULL, id]`
 * scores `full(id)`.
 */
export function fakeTask(
  name: string,
  full: (id: number) => number,
  member: (member: number, id: number) => number,
): NammTask<FakeExample> {
  return {
    name,
    example: (generation, index) => ({ id: (generation + index) % 4 }),
    key: (example) => String(example.id),
    prompt: (example) => Int32Array.of(example.id),
    score: (example, completion) =>
      completion[0] === FULL ? full(example.id) : member(completion[0]!, example.id),
    stop: {},
    maxNewTokens: 1,
  };
}

/**
 * An evaluator that runs no model: member m of a call completes prompt `[id]` with `[m, id]`
 * (`[FULL, id]` for the full cache) and live ratio `1 / (m + 2)`. It records every job.
 */
export function fakeEvaluator(): PopulationEvaluator & { readonly jobs: PopulationJob[] } {
  const jobs: PopulationJob[] = [];
  const evaluate = async (job: PopulationJob) => {
    jobs.push(job);
    return job.genomes.map((genome, m) =>
      job.requests.map((request) => ({
        tokens: Int32Array.of(genome === null ? FULL : m, request.prompt[0]!),
        liveRatio: genome === null ? 1 : 1 / (m + 2),
        peakRatio: 1,
      })),
    );
  };
  return Object.assign(evaluate, { jobs });
}

/** Trainer options around the fake evaluator: no model runs, the normalisation is given. */
export function fakeOptions(
  tasks: readonly NammTask<FakeExample>[],
  overrides: Partial<NammEvolutionOptions> = {},
): NammEvolutionOptions {
  return {
    // Never used: the evaluator is fake and the normalisation given.
    model: {} as DecoderModel,
    tasks: tasks as readonly NammTask[],
    stages: [{ tasks: [tasks[0]!.name], generations: 2 }],
    promptsPerTask: 2,
    scorer: AGE_MLP,
    features: 'age',
    normalization: identityNormalization(),
    population: 3,
    sigma0: 0.5,
    seed: 7,
    evaluate: fakeEvaluator(),
    ...overrides,
  };
}
