import { Rng } from '@lethe/core';
import {
  BUDGET_FEATURES,
  CONTROLLER_TENSOR_NAMES,
  type ControllerTensorName,
  controllerTensorShapes,
  type SolController,
  type SolControllerConfig,
  type SolControllerParameters,
} from '../src/index';

/** A small config for the tests that do not care about sizes. */
export const SMALL: SolControllerConfig = Object.freeze({
  inputSize: 8,
  width: 16,
  heads: 4,
  mlpRatio: 4,
  actionDim: 4,
  actions: 8,
  maxHorizon: 16,
});

/**
 * Parameters with every tensor random, LayerNorms and biases included (unlike the initialiser's
 * ones and zeros), so that every term of the forward shows in the outputs.
 */
export function randomParameters(
  config: SolControllerConfig,
  seed: number,
): SolControllerParameters {
  const rng = new Rng(seed);
  const shapes = controllerTensorShapes(config);
  const tensors = {} as Record<ControllerTensorName, Float32Array>;
  for (const name of CONTROLLER_TENSOR_NAMES) {
    const shape = shapes[name];
    const size = shape.reduce((a, b) => a * b, 1);
    if (name.endsWith('norm.weight')) {
      tensors[name] = rng.normal(size, 1, 0.3);
    } else if (name.endsWith('embedding.weight')) {
      tensors[name] = rng.normal(size, 0, 0.5);
    } else if (name.endsWith('.weight')) {
      tensors[name] = rng.normal(size, 0, 1 / Math.sqrt(shape[1]!));
    } else {
      tensors[name] = rng.normal(size, 0, 0.3);
    }
  }
  return { config, tensors };
}

/** `B` episodes of `T` steps as flat `[B, T, …]` arrays: −1 at `t = 1`, random actions after. */
export interface EpisodeBatch {
  readonly batch: number;
  readonly steps: number;
  readonly hidden: Float32Array;
  readonly embedding: Float32Array;
  readonly budget: Float32Array;
  readonly previousActions: Int32Array;
}

/**
 * Random episodes: hidden states at an LM-like scale of ~3, embeddings ~0.05, budget features in
 * their ranges, previous actions −1 at the first step and uniform afterwards.
 */
export function randomEpisodes(
  config: SolControllerConfig,
  batch: number,
  steps: number,
  seed: number,
): EpisodeBatch {
  const rng = new Rng(seed);
  const rows = batch * steps;
  const budget = rng.uniform(rows * BUDGET_FEATURES);
  for (let i = 0; i < budget.length; i++) {
    // deviations (the last three features) lie in [−1, 1]
    if (i % BUDGET_FEATURES >= 5) budget[i] = 2 * budget[i]! - 1;
  }
  const previousActions = new Int32Array(rows);
  const draws = rng.uniform(rows);
  for (let r = 0; r < rows; r++) {
    previousActions[r] = r % steps === 0 ? -1 : Math.floor(draws[r]! * config.actions);
  }
  return {
    batch,
    steps,
    hidden: rng.normal(rows * config.inputSize, 0.5, 3),
    embedding: rng.normal(rows * config.inputSize, 0, 0.05),
    budget,
    previousActions,
  };
}

/** Runs every episode of `batch` step by step, each on a fresh episode state: `[B, T, A]` and `[B, T]`. */
export function stepEpisodes(
  controller: SolController,
  batch: EpisodeBatch,
): { logits: Float32Array; values: Float32Array } {
  const { inputSize, actions } = controller.config;
  const rows = batch.batch * batch.steps;
  const logits = new Float32Array(rows * actions);
  const values = new Float32Array(rows);
  for (let b = 0; b < batch.batch; b++) {
    const episode = controller.newEpisode();
    for (let t = 0; t < batch.steps; t++) {
      const r = b * batch.steps + t;
      const out = controller.step(episode, stepInput(batch, r, inputSize));
      logits.set(out.logits, r * actions);
      values[r] = out.value;
    }
  }
  return { logits, values };
}

/** Row `r` (= `b·T + t`) of a batch as one step's input. */
export function stepInput(batch: EpisodeBatch, r: number, inputSize: number) {
  return {
    hidden: batch.hidden.subarray(r * inputSize, (r + 1) * inputSize),
    embedding: batch.embedding.subarray(r * inputSize, (r + 1) * inputSize),
    budget: batch.budget.subarray(r * BUDGET_FEATURES, (r + 1) * BUDGET_FEATURES),
    previousAction: batch.previousActions[r]!,
  };
}
