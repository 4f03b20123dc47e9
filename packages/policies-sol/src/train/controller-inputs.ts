import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { BUDGET_FEATURES } from '../budget/episode-budget';
import type { SolControllerConfig } from '../controller/controller-config';
import { NO_PREVIOUS_ACTION } from '../controller/controller-constants';

/**
 * A batch of `B` episodes of `T` steps each, as the controller reads them step by step
 * (`ControllerStepInput`), laid out `[B, T, …]` row-major: as tensors or as typed arrays.
 */
export interface ControllerBatch {
  /** `B`, the number of episodes. */
  readonly batch: number;
  /** `T`, the steps of each episode, 1 … `maxHorizon`. */
  readonly steps: number;
  /** The LM's final hidden state before each step, `[B, T, inputSize]` float32. */
  readonly hidden: tf.Tensor | Float32Array;
  /** The LM's embedding of each step's token, `[B, T, inputSize]` float32. */
  readonly embedding: tf.Tensor | Float32Array;
  /** The budget features `s_t` of each step, `[B, T, 8]` float32. */
  readonly budget: tf.Tensor | Float32Array;
  /** The action before each step, `[B, T]` int32: −1 at `t = 1`, else an action in `[0, A)`. */
  readonly previousActions: tf.Tensor | Int32Array;
}

/** A {@link ControllerBatch} checked and as tensors (owned by the caller's `tf.tidy`). */
export interface ControllerBatchTensors {
  /** `[B, T, inputSize]`. */
  readonly hidden: tf.Tensor3D;
  /** `[B, T, inputSize]`. */
  readonly embedding: tf.Tensor3D;
  /** `[B, T, 8]`. */
  readonly budget: tf.Tensor3D;
  /** `[B·T, A + 1]` float32: row `previousAction + 1` of the action-embedding table. */
  readonly previousActionsOneHot: tf.Tensor2D;
}

/**
 * Checks a batch against a controller's sizes and makes its tensors (call inside `tf.tidy`:
 * typed arrays become new tensors; given tensors are used as they are). The previous actions
 * are read back to the host to be checked.
 *
 * @throws LetheError `E_ARG` naming `inputs` (not an object), `inputs.batch` or `inputs.steps`
 *   (not a positive integer; steps above `maxHorizon`) or `inputs.previousActions` (a value
 *   outside `[−1, actions)`); `E_SHAPE` naming the field of the wrong shape or length;
 *   `E_DTYPE` naming a tensor of the wrong dtype (float32, int32 for the actions).
 */
export function batchTensors(
  inputs: ControllerBatch,
  config: SolControllerConfig,
): ControllerBatchTensors {
  if (typeof inputs !== 'object' || inputs === null) {
    throw new LetheError('E_ARG', 'must be an object of [B, T, …] inputs', 'inputs');
  }
  const { batch, steps } = inputs;
  if (!(Number.isSafeInteger(batch) && batch >= 1)) {
    throw new LetheError('E_ARG', `must be a positive integer, got ${batch}`, 'inputs.batch');
  }
  if (!(Number.isSafeInteger(steps) && steps >= 1 && steps <= config.maxHorizon)) {
    throw new LetheError(
      'E_ARG',
      `must be an integer in [1, maxHorizon ${config.maxHorizon}], got ${steps}`,
      'inputs.steps',
    );
  }
  const { inputSize, actions } = config;
  const hidden = asTensor(inputs.hidden, [batch, steps, inputSize], 'float32', 'inputs.hidden');
  const embedding = asTensor(
    inputs.embedding,
    [batch, steps, inputSize],
    'float32',
    'inputs.embedding',
  );
  const budget = asTensor(
    inputs.budget,
    [batch, steps, BUDGET_FEATURES],
    'float32',
    'inputs.budget',
  );
  const previous = asTensor(
    inputs.previousActions,
    [batch, steps],
    'int32',
    'inputs.previousActions',
  );
  // The one-hot rows are made here, on the host: tfjs-backend-wasm 4.22's OneHot with a float32
  // dtype writes the integer bits of 1 (1.4e-45) into its float output.
  const values = previous.dataSync();
  const oneHot = new Float32Array(values.length * (actions + 1));
  for (let i = 0; i < values.length; i++) {
    const a = values[i]!;
    if (!(a >= NO_PREVIOUS_ACTION && a < actions)) {
      throw new LetheError(
        'E_ARG',
        `value ${i} is ${a}; must be in [-1, ${actions})`,
        'inputs.previousActions',
      );
    }
    oneHot[i * (actions + 1) + a + 1] = 1;
  }
  return {
    hidden: hidden as tf.Tensor3D,
    embedding: embedding as tf.Tensor3D,
    budget: budget as tf.Tensor3D,
    previousActionsOneHot: tf.tensor2d(oneHot, [values.length, actions + 1]),
  };
}

function asTensor(
  value: tf.Tensor | Float32Array | Int32Array,
  shape: number[],
  dtype: 'float32' | 'int32',
  argument: string,
): tf.Tensor {
  if (value instanceof tf.Tensor) {
    if (value.shape.length !== shape.length || value.shape.some((size, i) => size !== shape[i])) {
      throw new LetheError(
        'E_SHAPE',
        `must be [${shape.join(', ')}], got [${value.shape.join(', ')}]`,
        argument,
      );
    }
    if (value.dtype !== dtype) {
      throw new LetheError('E_DTYPE', `must be ${dtype}, got ${value.dtype}`, argument);
    }
    return value;
  }
  const Expected = dtype === 'float32' ? Float32Array : Int32Array;
  if (!(value instanceof Expected)) {
    throw new LetheError('E_DTYPE', `must be a tensor or a ${Expected.name}`, argument);
  }
  const size = shape.reduce((a, b) => a * b, 1);
  if (value.length !== size) {
    throw new LetheError(
      'E_SHAPE',
      `must hold ${size} values ([${shape.join(', ')}]), got ${value.length}`,
      argument,
    );
  }
  return tf.tensor(value, shape, dtype);
}
