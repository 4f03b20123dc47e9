import { Rng } from '@lethe/core';
import { type CheckpointStore, DecoderModel, defaultConfig } from '@lethe/model';
import {
  ActionSet,
  controllerConfig,
  initControllerParameters,
  type SolControllerParameters,
} from '../../src/index';
import type { SolTrainerOptions } from '../../src/train/index';

/** A tiny Llama-style LM (as `sol-generate.test.ts`'s). */
export const LM_CONFIG = defaultConfig({
  model_type: 'llama',
  vocab_size: 19,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 128,
});

/** A random frozen LM. */
export function tinyModel(seed = 3): DecoderModel {
  return DecoderModel.random(LM_CONFIG, seed);
}

/** `count` random documents of `length` tokens. */
export function documents(count: number, length: number, seed = 11): Int32Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () =>
    Int32Array.from(rng.uniform(length), (u) => Math.floor(u * LM_CONFIG.vocab_size)),
  );
}

/** A small controller for the tiny LM over `actions`. */
export function tinyController(actions: ActionSet, seed = 5): SolControllerParameters {
  return initControllerParameters(
    controllerConfig({
      inputSize: LM_CONFIG.hidden_size,
      actions: actions.size,
      width: 16,
      heads: 2,
      actionDim: 4,
      maxHorizon: 8,
    }),
    { seed },
  );
}

/** The 2L action set: κ {0.1, 1}, ρ {0.6, 1}, q {5, 16}. */
export function jointActions(): ActionSet {
  return new ActionSet({ tokenKeep: [0.1, 1], mlpInputKeep: [0.6, 1], activationBits: [5, 16] });
}

/** A checkpoint store in memory. */
export function memoryStore(): CheckpointStore & { bytes: Uint8Array | undefined } {
  return {
    bytes: undefined,
    async read() {
      return this.bytes;
    },
    async write(bytes: Uint8Array) {
      this.bytes = bytes.slice();
    },
  };
}

/** A small run on `model`: three updates of two inputs (prefix 8, horizon 4) × three schedules. */
export function tinyTrainerOptions(
  model: DecoderModel,
  actions: ActionSet,
  overrides: Partial<SolTrainerOptions> = {},
): SolTrainerOptions {
  return {
    model,
    actions,
    controller: tinyController(actions),
    documents: documents(5, 16),
    updates: 3,
    prefix: 8,
    horizon: 4,
    batchSize: 2,
    groupSize: 3,
    lr: 1e-3,
    seed: 1,
    ...overrides,
  };
}
