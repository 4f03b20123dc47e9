import { LetheError } from '@lethe/core';
import { BUDGET_FEATURES } from '../budget/episode-budget';
import { mlpWidth, type SolControllerConfig } from './controller-config';
import { NO_PREVIOUS_ACTION } from './controller-constants';
import { ControllerEpisode } from './controller-episode';
import {
  type ControllerTensorName,
  type ControllerTensors,
  checkControllerParameters,
  controllerTensorShapes,
  type SolControllerParameters,
} from './controller-parameters';
import {
  type DenseLayer,
  geluTanhInPlace,
  layerNormInto,
  linearInto,
  type NormLayer,
  rmsNormalizeInto,
} from './vector-ops';

/** What the controller reads at one decode step `t` of an episode (§4). */
export interface ControllerStepInput {
  /** The LM's final hidden state after the previous token, `h_{t−1}` (length `inputSize`). */
  readonly hidden: Float32Array;
  /** The LM's input embedding of the current token, `e(x_t)` (length `inputSize`). */
  readonly embedding: Float32Array;
  /** The budget features `s_t` (length 8; `EpisodeBudget.features`). */
  readonly budget: Float32Array;
  /** The action taken at step `t − 1`, or {@link NO_PREVIOUS_ACTION} (−1) at `t = 1`. */
  readonly previousAction: number;
}

/** What the controller says at one step. */
export interface ControllerStepOutput {
  /** Policy logits over the `A` actions (a new array each step). */
  readonly logits: Float32Array;
  /** The value head's estimate. */
  readonly value: number;
}

/**
 * The SOL controller (§4) on plain typed arrays: a one-layer pre-norm causal transformer over
 * an episode's steps, run one step at a time against the episode's own KV cache
 * ({@link ControllerEpisode}), with a policy head over the discrete actions and a value head.
 *
 * At step `t`: `x = W_in·[rms(hidden); rms(embedding); budget] + b_in
 * + W_act·E_act[previousAction + 1] + P[t − 1]`; `h = x + Attn(LN₁(x))` (causal, `heads` heads,
 * over the episode's steps ≤ t); `o = LN_f(h + MLP(LN₂(h)))` with a GELU (tanh) MLP of width
 * `mlpRatio·width`; logits `W_π·o + b_π`, value `w_v·o + b_v`.
 *
 * The scratch buffers belong to the controller and are reused by every step; an episode holds
 * only its keys and values, so one controller serves any number of sequences, each with its own
 * episode (steps are synchronous). A step allocates only its logits.
 *
 * @example
 * ```ts
 * const controller = new SolController(initControllerParameters(controllerConfig({ inputSize: 64, actions: 8 })));
 * const episode = controller.newEpisode();
 * const { logits } = controller.step(episode, { hidden, embedding, budget, previousAction: -1 });
 * const action = greedyAction(logits);
 * ```
 */
export class SolController {
  /** The controller's sizes. */
  readonly config: SolControllerConfig;
  private readonly layers: ControllerLayers;
  private readonly features: Float32Array;
  private readonly x: Float32Array;
  private readonly normed: Float32Array;
  private readonly query: Float32Array;
  private readonly context: Float32Array;
  private readonly scores: Float32Array;
  private readonly mlp: Float32Array;
  private readonly value: Float32Array;

  /**
   * @param parameters the controller's config and tensors (checked, then copied).
   * @throws LetheError as `checkControllerParameters`.
   */
  constructor(parameters: SolControllerParameters) {
    const { config, tensors } = checkControllerParameters(parameters);
    this.config = Object.freeze({ ...config });
    this.layers = controllerLayers(config, tensors);
    const { inputSize, width, maxHorizon } = config;
    this.features = new Float32Array(2 * inputSize + BUDGET_FEATURES);
    this.x = new Float32Array(width);
    this.normed = new Float32Array(width);
    this.query = new Float32Array(width);
    this.context = new Float32Array(width);
    this.scores = new Float32Array(maxHorizon);
    this.mlp = new Float32Array(mlpWidth(config));
    this.value = new Float32Array(1);
  }

  /** A fresh episode state (no step taken) for this controller's sizes. */
  newEpisode(): ControllerEpisode {
    return new ControllerEpisode(this.config.width, this.config.maxHorizon);
  }

  /**
   * Takes step `episode.steps + 1` of `episode`: computes its logits and value, and appends the
   * step's key and value to the episode's cache.
   *
   * @throws LetheError `E_ARG` naming `episode` for a state of another controller's sizes;
   *   `E_STATE` naming `episode` when it has already taken `maxHorizon` steps; `E_SHAPE` naming
   *   `input.hidden`, `input.embedding` or `input.budget` of the wrong length; `E_ARG` naming
   *   one of them for a NaN or ±∞, or `input.previousAction` unless it is an integer in
   *   `[−1, actions)`. Nothing changes when it throws.
   */
  step(episode: ControllerEpisode, input: ControllerStepInput): ControllerStepOutput {
    const { inputSize, width: d, actions, actionDim, maxHorizon } = this.config;
    if (
      !(episode instanceof ControllerEpisode) ||
      episode.width !== d ||
      episode.maxHorizon !== maxHorizon
    ) {
      throw new LetheError(
        'E_ARG',
        `must be an episode of this controller (width ${d}, maxHorizon ${maxHorizon}); use newEpisode()`,
        'episode',
      );
    }
    const p = episode.steps;
    if (p >= maxHorizon) {
      throw new LetheError(
        'E_STATE',
        `has taken all ${maxHorizon} steps of maxHorizon; start a new episode`,
        'episode',
      );
    }
    checkVector(input.hidden, inputSize, 'input.hidden');
    checkVector(input.embedding, inputSize, 'input.embedding');
    checkVector(input.budget, BUDGET_FEATURES, 'input.budget');
    const previous = input.previousAction;
    if (!(Number.isInteger(previous) && previous >= NO_PREVIOUS_ACTION && previous < actions)) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [-1, ${actions}), got ${previous}`,
        'input.previousAction',
      );
    }
    const { layers: l, features, x, normed, query, context, mlp, value } = this;
    const { keys, values } = episode;

    // Input: normalised LM features and budget, previous action, position.
    rmsNormalizeInto(input.hidden, features, 0);
    rmsNormalizeInto(input.embedding, features, inputSize);
    features.set(input.budget, 2 * inputSize);
    linearInto(l.input, features, 0, x, 0);
    linearInto(l.actionProjection, l.actionTable, (previous + 1) * actionDim, x, 0, true);
    for (let i = 0; i < d; i++) x[i] = x[i]! + l.positions[p * d + i]!;

    // Causal self-attention over the episode's steps 1 … t; this step's key and value join the
    // episode's cache at row p.
    layerNormInto(x, l.attentionNorm, normed);
    linearInto(l.query, normed, 0, query, 0);
    linearInto(l.key, normed, 0, keys, p * d);
    linearInto(l.value, normed, 0, values, p * d);
    this.attend(keys, values, p + 1);
    linearInto(l.output, context, 0, x, 0, true);

    // MLP.
    layerNormInto(x, l.mlpNorm, normed);
    linearInto(l.up, normed, 0, mlp, 0);
    geluTanhInPlace(mlp);
    linearInto(l.down, mlp, 0, x, 0, true);

    // Heads.
    layerNormInto(x, l.finalNorm, normed);
    const logits = new Float32Array(actions);
    linearInto(l.policy, normed, 0, logits, 0);
    linearInto(l.valueHead, normed, 0, value, 0);
    episode.advance();
    return { logits, value: value[0]! };
  }

  /** Multi-head softmax attention of {@link query} over the first `steps` rows, into {@link context}. */
  private attend(keys: Float32Array, values: Float32Array, steps: number): void {
    const { query, context, scores } = this;
    const d = query.length;
    const headDim = d / this.config.heads;
    const scale = 1 / Math.sqrt(headDim);
    for (let offset = 0; offset < d; offset += headDim) {
      let max = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < steps; j++) {
        let dot = 0;
        for (let c = 0; c < headDim; c++) dot += query[offset + c]! * keys[j * d + offset + c]!;
        const score = dot * scale;
        scores[j] = score;
        if (score > max) max = score;
      }
      let total = 0;
      for (let j = 0; j < steps; j++) {
        const e = Math.exp(scores[j]! - max);
        scores[j] = e;
        total += e;
      }
      for (let c = 0; c < headDim; c++) {
        let sum = 0;
        for (let j = 0; j < steps; j++) sum += scores[j]! * values[j * d + offset + c]!;
        context[offset + c] = sum / total;
      }
    }
  }
}

/** The controller's tensors (copies) grouped by layer. */
interface ControllerLayers {
  readonly input: DenseLayer;
  readonly actionTable: Float32Array;
  readonly actionProjection: DenseLayer;
  readonly positions: Float32Array;
  readonly attentionNorm: NormLayer;
  readonly query: DenseLayer;
  readonly key: DenseLayer;
  readonly value: DenseLayer;
  readonly output: DenseLayer;
  readonly mlpNorm: NormLayer;
  readonly up: DenseLayer;
  readonly down: DenseLayer;
  readonly finalNorm: NormLayer;
  readonly policy: DenseLayer;
  readonly valueHead: DenseLayer;
}

function controllerLayers(
  config: SolControllerConfig,
  tensors: ControllerTensors,
): ControllerLayers {
  const shapes = controllerTensorShapes(config);
  const copy = (name: ControllerTensorName) => Float32Array.from(tensors[name]);
  const dense = (prefix: string, bias = true): DenseLayer => {
    const name = `${prefix}.weight` as ControllerTensorName;
    const [rows, cols] = shapes[name] as [number, number];
    const biasName = `${prefix}.bias` as ControllerTensorName;
    return { weight: copy(name), bias: bias ? copy(biasName) : undefined, rows, cols };
  };
  const norm = (prefix: string): NormLayer => ({
    weight: copy(`${prefix}.weight` as ControllerTensorName),
    bias: copy(`${prefix}.bias` as ControllerTensorName),
  });
  return {
    input: dense('input'),
    actionTable: copy('action_embedding.weight'),
    actionProjection: dense('action_projection', false),
    positions: copy('position_embedding.weight'),
    attentionNorm: norm('block.attention_norm'),
    query: dense('block.attention.query'),
    key: dense('block.attention.key'),
    value: dense('block.attention.value'),
    output: dense('block.attention.output'),
    mlpNorm: norm('block.mlp_norm'),
    up: dense('block.mlp.up'),
    down: dense('block.mlp.down'),
    finalNorm: norm('final_norm'),
    policy: dense('policy_head'),
    valueHead: dense('value_head'),
  };
}

function checkVector(values: Float32Array, length: number, argument: string): void {
  if (values === null || typeof values !== 'object' || values.length !== length) {
    throw new LetheError(
      'E_SHAPE',
      `must hold ${length} values, got ${values === null || typeof values !== 'object' ? typeof values : values.length}`,
      argument,
    );
  }
  for (let i = 0; i < length; i++) {
    if (!Number.isFinite(values[i]!)) {
      throw new LetheError('E_ARG', `value ${i} is ${values[i]}`, argument);
    }
  }
}
