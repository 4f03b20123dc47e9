import { type DecoderModel, defaultConfig } from '@lethe/model';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';
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
