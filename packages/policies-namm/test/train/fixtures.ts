import { type DecoderModel, defaultConfig } from '@lethe/model';
import { identityNormalization } from '../../src/features/token-features';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';
import type { PopulationEvaluator, PopulationJob } from '../../src/train/evaluate-population';
import type { NammEvaluationSettings } from '../../src/train/evaluation-settings';
import type { NammGenerationRecord } from '../../src/train/evolution-record';
import { NammEvolution } from '../../src/train/namm-evolution';
import type { NammTask } from '../../src/train/namm-task';

/** A two-layer model small enough to evolve on in a test: vocabulary 11, width 16, 2 query / 1 KV heads. */
export const TINY_CONFIG = defaultConfig({
  model_type: 'llama',
  vocab_size: 11,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
});

/** A BAM small enough for a full-covariance CMA-ES in a test (332 parameters). */
export const TINY_BAM: ScorerSpec = { kind: 'bam', features: 25, hidden: 2 };

/** An example of a toy task: an id and a prompt. */
export interface ToyExample {
  readonly id: number;
  readonly prompt: Int32Array;
}

/**
 * A toy task over a pool of 5 examples (prompts of 20–40 tokens): generation g slot i draws
 * example `(g + offset·i) mod 5`; the score is 1 + the sum of the completion's tokens / 100,
 * positive and sensitive to any change of the completion.
 */
export function toyTask(name: string, offset: number): NammTask<ToyExample> {
  const pool = Array.from({ length: 5 }, (_, id) => ({
    id,
    prompt: Int32Array.from({ length: 20 + 5 * id }, (_, t) => 1 + ((t * (id + 3) + offset) % 10)),
  }));
  return {
    name,
    example: (generation, index) => pool[(generation + offset * index) % pool.length]!,
    key: (example) => String(example.id),
    prompt: (example) => example.prompt,
    score: (_, completion) => 1 + completion.reduce((sum, t) => sum + t, 0) / 100,
    stop: { eosTokenIds: [0] },
    maxNewTokens: 10,
  };
}

/** A copy of every weight of `model`, by name. */
export function weightsOf(model: DecoderModel): Record<string, Float32Array> {
  return Object.fromEntries(
    Object.entries(model.toTensors()).map(([name, tensor]) => [name, tensor.data.slice()]),
  );
}

/** How the tests' members run: {@link TINY_BAM} on the spectrogram, every 16 tokens, threshold 0. */
export const TINY_SETTINGS: NammEvaluationSettings = {
  scorer: TINY_BAM,
  features: 'spectrogram',
  normalization: identityNormalization(),
  updateInterval: 16,
  threshold: 0,
  equalHeads: false,
};

/** A {@link TINY_BAM} genome that evicts, the same for the same seed. */
export function tinyGenome(seed: number): Float64Array {
  return Float64Array.from(
    { length: scorerParameterCount(TINY_BAM) },
    (_, i) => Math.sin(seed * 13.7 + 7.1 * i) / 2,
  );
}

/**
 * A population of `genomes` completing two prompts of the toy task `toy` (8 tokens each) under
 * {@link TINY_SETTINGS}: what the pooled and queued evaluators are checked against one thread with.
 */
export function tinyPopulationJob(genomes: readonly (Float64Array | null)[]): PopulationJob {
  const task = toyTask('toy', 1);
  return {
    genomes,
    requests: [0, 1].map((i) => ({
      prompt: task.prompt(task.example(0, i)),
      maxNewTokens: 8,
      stop: task.stop,
    })),
    settings: TINY_SETTINGS,
  };
}

/**
 * The history, without its wall times, of a small evolution of {@link TINY_BAM} on the toy task
 * (population 4, seed 5) with `evaluate` (default: in this thread): what another evaluator must
 * reproduce exactly.
 */
export async function tinyEvolutionHistory(
  model: DecoderModel,
  generations: number,
  evaluate?: PopulationEvaluator,
): Promise<Omit<NammGenerationRecord, 'seconds'>[]> {
  const evolution = new NammEvolution({
    model,
    tasks: [toyTask('toy', 1)],
    stages: [{ tasks: ['toy'], generations }],
    promptsPerTask: 2,
    scorer: TINY_BAM,
    population: 4,
    sigma0: 0.5,
    seed: 5,
    updateInterval: 16,
    evaluate,
  });
  const { history } = await evolution.train();
  return history.map(({ seconds: _, ...record }) => record);
}
