import { LetheError, Rng } from '@lethe/core';
import { BUDGET_FEATURES } from '../budget/episode-budget';
import { checkControllerConfig, mlpWidth, type SolControllerConfig } from './controller-config';

/**
 * Names of a controller's tensors, in file order. Linear weights are in torch layout
 * `[out, in]`, row-major; every tensor is float32.
 *
 * | name | shape |
 * |---|---|
 * | `input.weight`, `input.bias` | `[d, 2·inputSize + 8]`, `[d]` |
 * | `action_embedding.weight` | `[A + 1, actionDim]` (row 0: no previous action) |
 * | `action_projection.weight` | `[d, actionDim]` |
 * | `position_embedding.weight` | `[maxHorizon, d]` |
 * | `block.attention_norm.{weight,bias}` | `[d]` |
 * | `block.attention.{query,key,value,output}.weight`, `.bias` | `[d, d]`, `[d]` |
 * | `block.mlp_norm.{weight,bias}` | `[d]` |
 * | `block.mlp.up.weight`, `.bias` | `[mlpRatio·d, d]`, `[mlpRatio·d]` |
 * | `block.mlp.down.weight`, `.bias` | `[d, mlpRatio·d]`, `[d]` |
 * | `final_norm.{weight,bias}` | `[d]` |
 * | `policy_head.weight`, `.bias` | `[A, d]`, `[A]` |
 * | `value_head.weight`, `.bias` | `[1, d]`, `[1]` |
 */
export const CONTROLLER_TENSOR_NAMES = Object.freeze([
  'input.weight',
  'input.bias',
  'action_embedding.weight',
  'action_projection.weight',
  'position_embedding.weight',
  'block.attention_norm.weight',
  'block.attention_norm.bias',
  'block.attention.query.weight',
  'block.attention.query.bias',
  'block.attention.key.weight',
  'block.attention.key.bias',
  'block.attention.value.weight',
  'block.attention.value.bias',
  'block.attention.output.weight',
  'block.attention.output.bias',
  'block.mlp_norm.weight',
  'block.mlp_norm.bias',
  'block.mlp.up.weight',
  'block.mlp.up.bias',
  'block.mlp.down.weight',
  'block.mlp.down.bias',
  'final_norm.weight',
  'final_norm.bias',
  'policy_head.weight',
  'policy_head.bias',
  'value_head.weight',
  'value_head.bias',
] as const);

/** One of {@link CONTROLLER_TENSOR_NAMES}. */
export type ControllerTensorName = (typeof CONTROLLER_TENSOR_NAMES)[number];

/** A controller's tensors by name. */
export type ControllerTensors = Readonly<Record<ControllerTensorName, Float32Array>>;

/** A SOL controller: its sizes and its float32 tensors. */
export interface SolControllerParameters {
  /** The sizes the tensors are shaped by. */
  readonly config: SolControllerConfig;
  /** Every tensor of {@link CONTROLLER_TENSOR_NAMES}, flat row-major. */
  readonly tensors: ControllerTensors;
}

/** The shape of every tensor of a controller of `config` (see {@link CONTROLLER_TENSOR_NAMES}). */
export function controllerTensorShapes(
  config: SolControllerConfig,
): Readonly<Record<ControllerTensorName, readonly number[]>> {
  const { inputSize, width: d, actionDim, actions, maxHorizon } = config;
  const m = mlpWidth(config);
  return {
    'input.weight': [d, 2 * inputSize + BUDGET_FEATURES],
    'input.bias': [d],
    'action_embedding.weight': [actions + 1, actionDim],
    'action_projection.weight': [d, actionDim],
    'position_embedding.weight': [maxHorizon, d],
    'block.attention_norm.weight': [d],
    'block.attention_norm.bias': [d],
    'block.attention.query.weight': [d, d],
    'block.attention.query.bias': [d],
    'block.attention.key.weight': [d, d],
    'block.attention.key.bias': [d],
    'block.attention.value.weight': [d, d],
    'block.attention.value.bias': [d],
    'block.attention.output.weight': [d, d],
    'block.attention.output.bias': [d],
    'block.mlp_norm.weight': [d],
    'block.mlp_norm.bias': [d],
    'block.mlp.up.weight': [m, d],
    'block.mlp.up.bias': [m],
    'block.mlp.down.weight': [d, m],
    'block.mlp.down.bias': [d],
    'final_norm.weight': [d],
    'final_norm.bias': [d],
    'policy_head.weight': [actions, d],
    'policy_head.bias': [actions],
    'value_head.weight': [1, d],
    'value_head.bias': [1],
  };
}

/** Number of values of a tensor of `shape`. */
function shapeSize(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Total number of parameters of a controller of `config`. */
export function controllerParameterCount(config: SolControllerConfig): number {
  const shapes = controllerTensorShapes(checkControllerConfig(config));
  return CONTROLLER_TENSOR_NAMES.reduce((total, name) => total + shapeSize(shapes[name]), 0);
}

/**
 * Checks a controller: its config (as `checkControllerConfig`), then exactly the tensors of
 * {@link CONTROLLER_TENSOR_NAMES}, each a `Float32Array` of its shape's size with finite values.
 *
 * @returns `parameters`, for chaining.
 * @throws LetheError `E_ARG` naming a config field or `parameters` (not an object);
 *   `E_CHECKPOINT` naming the tensor that is missing, not expected (extra) or of the wrong size;
 *   `E_DTYPE` naming a tensor that is not a `Float32Array`; `E_ARG` naming the tensor holding a
 *   NaN or ±∞ (with its first bad index).
 */
export function checkControllerParameters(
  parameters: SolControllerParameters,
): SolControllerParameters {
  if (typeof parameters !== 'object' || parameters === null) {
    throw new LetheError('E_ARG', 'must be an object { config, tensors }', 'parameters');
  }
  const shapes = controllerTensorShapes(checkControllerConfig(parameters.config));
  const tensors = (parameters.tensors ?? {}) as Readonly<Record<string, unknown>>;
  for (const name of CONTROLLER_TENSOR_NAMES) {
    const values = tensors[name];
    if (values === undefined) {
      throw new LetheError('E_CHECKPOINT', 'is missing', name);
    }
    if (!(values instanceof Float32Array)) {
      throw new LetheError('E_DTYPE', 'must be a Float32Array', name);
    }
    const expected = shapeSize(shapes[name]);
    if (values.length !== expected) {
      throw new LetheError(
        'E_CHECKPOINT',
        `must hold ${expected} values ([${shapes[name].join(', ')}]), got ${values.length}`,
        name,
      );
    }
    const bad = firstNonFinite(values);
    if (bad >= 0) throw new LetheError('E_ARG', `value ${bad} is ${values[bad]}`, name);
  }
  const extra = Object.keys(tensors).find(
    (name) => !(CONTROLLER_TENSOR_NAMES as readonly string[]).includes(name),
  );
  if (extra !== undefined) {
    throw new LetheError('E_CHECKPOINT', 'is not a tensor of a SOL controller', extra);
  }
  return parameters;
}

/** How {@link initControllerParameters} draws a controller. */
export interface ControllerInitOptions {
  /** Seed of the normal draws (a non-negative safe integer). Default 0. */
  readonly seed?: number;
}

/** Standard deviation of the learned embedding tables (GPT-2's convention). */
const EMBEDDING_STD = 0.02;
/** Scale of the heads' weights relative to `1/√d`: the first policy is near uniform. */
const HEAD_GAIN = 0.01;

/**
 * A freshly initialised controller: Linear weights drawn `N(0, 1/fan_in)` (the policy and value
 * heads 0.01 times that, so the first policy is near uniform and the first values near 0),
 * embedding tables `N(0, 0.02²)`, biases 0, LayerNorm weights 1 and biases 0. The draws come
 * from one seeded stream in {@link CONTROLLER_TENSOR_NAMES} order, so the same config and seed
 * always give the same values.
 *
 * @throws LetheError as `checkControllerConfig`; `E_ARG` naming `seed` for a seed that is not a
 *   non-negative safe integer.
 */
export function initControllerParameters(
  config: SolControllerConfig,
  options: ControllerInitOptions = {},
): SolControllerParameters {
  const shapes = controllerTensorShapes(checkControllerConfig(config));
  const rng = new Rng(options.seed ?? 0);
  const tensors = {} as Record<ControllerTensorName, Float32Array>;
  for (const name of CONTROLLER_TENSOR_NAMES) {
    const shape = shapes[name];
    const size = shapeSize(shape);
    if (name.endsWith('norm.weight')) {
      tensors[name] = new Float32Array(size).fill(1);
    } else if (name.endsWith('embedding.weight')) {
      tensors[name] = rng.normal(size, 0, EMBEDDING_STD);
    } else if (name.endsWith('.weight')) {
      const gain = name.endsWith('head.weight') ? HEAD_GAIN : 1;
      tensors[name] = rng.normal(size, 0, gain / Math.sqrt(shape[1]!));
    } else {
      tensors[name] = new Float32Array(size);
    }
  }
  return { config, tensors };
}

/** Index of the first NaN or ±∞ of `values`, or -1 when every one is finite. */
export function firstNonFinite(values: Float32Array): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) return i;
  return -1;
}
