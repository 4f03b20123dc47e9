import { tf } from '@lethe/tensor';
import { BUDGET_FEATURES } from '../budget/episode-budget';
import type { SolControllerConfig } from '../controller/controller-config';
import {
  GELU_CUBIC,
  GELU_SQRT_2_OVER_PI,
  INPUT_RMS_EPS,
  LAYER_NORM_EPS,
} from '../controller/controller-constants';
import {
  CONTROLLER_TENSOR_NAMES,
  type ControllerTensorName,
  checkControllerParameters,
  controllerTensorShapes,
  type SolControllerParameters,
} from '../controller/controller-parameters';
import { batchTensors, type ControllerBatch } from './controller-inputs';

/** The controller's outputs for a batch: per episode and step. */
export interface ControllerBatchOutput {
  /** Policy logits `[B, T, A]`. */
  readonly logits: tf.Tensor3D;
  /** Value estimates `[B, T]`. */
  readonly values: tf.Tensor2D;
}

/** Added to the attention scores of later steps: `exp` of it underflows to exactly 0. */
const MASKED = -1e9;

/**
 * The SOL controller as trainable `tf.Variable`s — the same architecture and tensors as the
 * inference `SolController` — run over whole episodes in parallel: the training path. Step `t`
 * of an episode attends to steps `1 … t` through a causal mask, so `forward` gives, for every
 * step, what `SolController.step` gives when the steps are taken one by one (tested to 1e-4).
 * Differentiable with respect to {@link ControllerGraph.variables}.
 */
export class ControllerGraph {
  /** The controller's sizes. */
  readonly config: SolControllerConfig;
  /** The trainable variables by tensor name (`input.weight`, `block.attention.query.weight`, …). */
  readonly variables: ReadonlyMap<ControllerTensorName, tf.Variable>;
  private readonly lookup: Lookup = (name) => this.variables.get(name)!;

  /**
   * Creates the variables from a controller's values (copied), in their tensor shapes.
   *
   * @throws LetheError as `checkControllerParameters`.
   */
  constructor(parameters: SolControllerParameters) {
    const { config, tensors } = checkControllerParameters(parameters);
    this.config = Object.freeze({ ...config });
    const shapes = controllerTensorShapes(config);
    const variables = new Map<ControllerTensorName, tf.Variable>();
    for (const name of CONTROLLER_TENSOR_NAMES) {
      // tfjs variable names are global: leave them unique, so that controllers can coexist.
      const values = tensors[name].slice();
      variables.set(
        name,
        tf.tidy(() => tf.variable(tf.tensor(values, [...shapes[name]], 'float32'), true)),
      );
    }
    this.variables = variables;
  }

  /**
   * Runs `B` episodes of `T` steps in parallel. The caller owns (and disposes) the outputs; every
   * intermediate tensor is freed.
   *
   * @throws LetheError as the batch's checks: `E_ARG` naming `inputs.batch`, `inputs.steps` or
   *   `inputs.previousActions`, `E_SHAPE` / `E_DTYPE` naming the field.
   */
  forward(inputs: ControllerBatch): ControllerBatchOutput {
    const { inputSize, width: d, actions } = this.config;
    const v = this.lookup;
    return tf.tidy(() => {
      const given = batchTensors(inputs, this.config);
      const { batch, steps } = inputs;
      const rows = batch * steps;
      const features = tf.reshape(
        tf.concat([rmsNormalize(given.hidden), rmsNormalize(given.embedding), given.budget], 2),
        [rows, 2 * inputSize + BUDGET_FEATURES],
      );
      const action = tf.matMul(
        tf.matMul(given.previousActionsOneHot, v('action_embedding.weight')),
        v('action_projection.weight'),
        false,
        true,
      );
      const position = tf.slice(v('position_embedding.weight'), [0, 0], [steps, d]);
      const x = tf.add(
        tf.reshape(tf.add(linear(features, v, 'input'), action), [batch, steps, d]),
        position,
      );

      const attended = tf.add(x, this.attention(layerNorm(x, v, 'block.attention_norm'), steps));
      const flat = tf.reshape(attended, [rows, d]);
      const up = geluTanh(linear(layerNorm(flat, v, 'block.mlp_norm'), v, 'block.mlp.up'));
      const out = layerNorm(tf.add(flat, linear(up, v, 'block.mlp.down')), v, 'final_norm');
      return {
        logits: tf.reshape(linear(out, v, 'policy_head'), [batch, steps, actions]) as tf.Tensor3D,
        values: tf.reshape(linear(out, v, 'value_head'), [batch, steps]) as tf.Tensor2D,
      };
    });
  }

  /** The current values as plain parameters (for `encodeController` or a `SolController`). */
  exportParameters(): SolControllerParameters {
    const tensors = {} as Record<ControllerTensorName, Float32Array>;
    for (const [name, variable] of this.variables) {
      tensors[name] = (variable.dataSync() as Float32Array).slice();
    }
    return { config: this.config, tensors };
  }

  /** Frees the variables. */
  dispose(): void {
    for (const variable of this.variables.values()) variable.dispose();
  }

  /** Causal multi-head self-attention of `a` `[B, T, d]` over its steps, projected: `[B, T, d]`. */
  private attention(a: tf.Tensor, steps: number): tf.Tensor {
    const { width: d, heads } = this.config;
    const v = this.lookup;
    const [batch] = a.shape as [number];
    const headDim = d / heads;
    const flat = tf.reshape(a, [batch * steps, d]);
    const split = (name: string) =>
      tf.transpose(tf.reshape(linear(flat, v, name), [batch, steps, heads, headDim]), [0, 2, 1, 3]);
    const query = split('block.attention.query');
    const key = split('block.attention.key');
    const value = split('block.attention.value');
    const scores = tf.add(
      tf.mul(tf.matMul(query, key, false, true), 1 / Math.sqrt(headDim)),
      causalMask(steps),
    );
    const context = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), value), [0, 2, 1, 3]), [
      batch * steps,
      d,
    ]);
    return tf.reshape(linear(context, v, 'block.attention.output'), [batch, steps, d]);
  }
}

type Lookup = (name: ControllerTensorName) => tf.Variable;

/** `x·Wᵀ + b` of the torch `Linear` named `prefix` (`x` `[rows, in]`). Plain matMul + add. */
function linear(x: tf.Tensor, v: Lookup, prefix: string): tf.Tensor2D {
  const weight = v(`${prefix}.weight` as ControllerTensorName);
  const bias = v(`${prefix}.bias` as ControllerTensorName);
  return tf.add(tf.matMul(x as tf.Tensor2D, weight as tf.Tensor2D, false, true), bias);
}

/** LayerNorm over the last axis with the weight and bias named `prefix`. */
function layerNorm(x: tf.Tensor, v: Lookup, prefix: string): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  const normed = tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, LAYER_NORM_EPS)));
  return tf.add(
    tf.mul(normed, v(`${prefix}.weight` as ControllerTensorName)),
    v(`${prefix}.bias` as ControllerTensorName),
  );
}

/** `x / √(mean(x²) + ε)` over the last axis, no learned scale. */
function rmsNormalize(x: tf.Tensor): tf.Tensor {
  return tf.div(x, tf.sqrt(tf.add(tf.mean(tf.square(x), -1, true), INPUT_RMS_EPS)));
}

/** GELU, tanh approximation. */
function geluTanh(x: tf.Tensor): tf.Tensor {
  const cube = tf.mul(tf.mul(x, x), x);
  const inner = tf.mul(tf.add(x, tf.mul(cube, GELU_CUBIC)), GELU_SQRT_2_OVER_PI);
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}

/** `[T, T]`: 0 where step `i` may see step `j` (`j ≤ i`), {@link MASKED} above the diagonal. */
function causalMask(steps: number): tf.Tensor2D {
  const mask = new Float32Array(steps * steps);
  for (let i = 0; i < steps; i++) mask.fill(MASKED, i * steps + i + 1, (i + 1) * steps);
  return tf.tensor2d(mask, [steps, steps]);
}
