import { DecoderModel, defaultConfig, initialTensors, type ModelConfig } from '@lethe/model';
import { tf } from '@lethe/tensor';
import type { CollectRolloutsOptions } from '../../src/train/collect-rollouts';
import type { NgcTask } from '../../src/train/ngc-task';
import type { NgcTrainerOptions } from '../../src/train/ngc-trainer';

/** A two-layer model small enough to train in a test: vocabulary 9, width 16, 2 query / 1 KV heads. */
export const TINY_CONFIG = defaultConfig({
  model_type: 'llama',
  vocab_size: 9,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
});

/** NGC settings that run several rounds within a few dozen tokens. */
export const TINY_NGC = {
  cadence: 6,
  blockSize: 2,
  window: 3,
  logits: { kind: 'log', temperature: 1 },
} as const;

/** A toy task for the tiny model: reward 1 when the completion contains token 3. */
export const TOY_TASK: NgcTask<Int32Array> = {
  example: (step, index) => Int32Array.of(1, 2 + ((step + index) % 5), 4 + (index % 3)),
  prompt: (example) => example,
  reward: (_, completion) => (completion.includes(3) ? 1 : 0),
  stop: { eosTokenIds: [2] },
};

/** Trainer options on the toy task: 3 updates of 2 prompts × 3 rollouts, ε 0 → 0.5. */
export function toyTrainerOptions(
  model: DecoderModel,
  overrides: Partial<NgcTrainerOptions<Int32Array>> = {},
): NgcTrainerOptions<Int32Array> {
  return {
    model,
    task: TOY_TASK,
    variant: 'ngc',
    steps: 3,
    promptsPerStep: 2,
    groupSize: 3,
    curriculum: { retention: [1, 0.5], stageSteps: 2, blend: 0.6 },
    ngc: TINY_NGC,
    temperature: 1,
    maxNewTokens: 16,
    lr: 1e-2,
    adam: { beta1: 0.9, beta2: 0.95, epsilon: 1e-8, weightDecay: 0 },
    clipNorm: 1,
    microBatch: 4,
    minLengthPenalty: true,
    seed: 5,
    ...overrides,
  };
}

/**
 * A model of `config` with its matrices 25× the default init (seed `seed`), so attention is far
 * from uniform and the eviction scores matter: what gradient tests of L_mem run on.
 */
export function sharpModel(config: ModelConfig, seed: number): DecoderModel {
  const tensors = initialTensors(config, seed);
  for (const tensor of Object.values(tensors)) {
    if (tensor.shape.length === 2) tensor.data = tensor.data.map((x) => 25 * x);
  }
  return DecoderModel.fromTensors(config, tensors);
}

/** Rollout settings of the pooled and queued rollout tests. */
export const ROLLOUT_SETTINGS: Omit<CollectRolloutsOptions, 'model'> = {
  ngc: TINY_NGC,
  maxNewTokens: 24,
  temperature: 1,
  stop: { eosTokenIds: [2] },
  seed: 5,
};

/** Six requests, both rates in each half, so chunks of them batch the same rollouts differently. */
export const ROLLOUT_REQUESTS = [0, 0.5, 0, 0.5, 0.5, 0].map((evictionRate, i) => ({
  prompt: Int32Array.of(1, 3 + (i % 4), 4 + (i % 3)),
  stream: 10 + i,
  evictionRate,
}));

/** Negates one weight matrix (in place): new weights, new rollouts. */
export function changeWeights(model: DecoderModel): void {
  const variable = model.parameters.get('model.layers.0.self_attn.q_proj.weight')!;
  tf.tidy(() => variable.assign(tf.neg(variable)));
}

/** Two updates of the toy trainer over both rates with {@link ROLLOUT_SETTINGS}. */
export function rolloutTrainerOptions(model: DecoderModel): NgcTrainerOptions<Int32Array> {
  return toyTrainerOptions(model, {
    steps: 2,
    curriculum: { retention: [1, 0.5], stageSteps: 1, blend: 0.6 },
    temperature: ROLLOUT_SETTINGS.temperature,
    maxNewTokens: ROLLOUT_SETTINGS.maxNewTokens,
    seed: ROLLOUT_SETTINGS.seed,
    task: { ...TOY_TASK, stop: ROLLOUT_SETTINGS.stop },
  });
}
