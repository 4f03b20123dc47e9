import { assertInteger, LetheError } from '@lethe/core';
import { KVCache, type KVCacheOptions } from '@lethe/kv-cache';
import { type DecoderModel, GenerationSession } from '@lethe/model';
import { ActionSet, type AxisUsage } from '../actions/action-set';
import { DEFAULT_SAMPLING_TEMPERATURE } from '../controller/action-choice';
import { checkControllerInputSize } from '../controller/controller-file';
import { SolController } from '../controller/sol-controller';
import { logProbabilityAt } from './log-probability';
import { RecordingPolicy, type ScheduleSteps } from './recording-policy';

/** One training input: a token document and its requested targets. */
export interface RolloutInput {
  /** Token ids; the first `prefix + horizon + 1` are used. */
  readonly document: Int32Array;
  /** This input's prefix `P`, ≥ 1 (default: the settings' `prefix`). */
  readonly prefix?: number;
  /** `[C_κ, C_ρ, C_η]`, each in [0, 1], shared by the input's `K` schedules. */
  readonly targets: AxisUsage;
}

/** How {@link counterfactualRollouts} runs its inputs. */
export interface RolloutSettings {
  /** Prefix length `P` prefilled densely, ≥ 1. */
  readonly prefix: number;
  /** Teacher-forced decode steps `T`, in [1, the controller's `maxHorizon`]. */
  readonly horizon: number;
  /** Schedules per input `K` (the GRPO group size), ≥ 1. */
  readonly groupSize: number;
  /** Sampling temperature, > 0 (default 1.3, §4). */
  readonly temperature?: number;
  /** Entries always read densely (default 4 sinks + 2 window, as `SolPolicy`). */
  readonly alwaysDense?: number;
  /** Seed of the session's random streams (default 0). */
  readonly seed?: number;
  /** Stream id of the first schedule; schedule `s` (input `⌊s/K⌋`) gets `firstStream + s` (default 0). */
  readonly firstStream?: number;
}

/** One sampled schedule of a rollout: its records, task rewards and realised usage. */
export interface ScheduleRollout extends ScheduleSteps {
  /** `r_t = log p^{a_t}_t(y_t)` with `y_t = x_{P+t+1}` (eq. 1; float64), `[T]`. */
  readonly rewards: Float64Array;
  /** `[κ̄, ρ̄, η̄]` over the effective steps, or undefined when none was effective. */
  readonly realised: AxisUsage | undefined;
}

/** The `K` schedules of one input. */
export interface RolloutGroup {
  /** The input's targets. */
  readonly targets: AxisUsage;
  /** The `K` schedules, in stream order. */
  readonly schedules: readonly ScheduleRollout[];
}

/**
 * Counterfactual compute schedules under teacher forcing (§4, "GRPO with per-sequence budget
 * sampling"): every input's prefix `x_0 … x_{P−1}` (`P` its own `prefix`, else the settings')
 * is prefilled densely, then `K` copies of it
 * decode the document's own tokens `x_P … x_{P+T−1}` for `T` steps, each copy with its own
 * controller episode and random stream, so that only the sampled actions differ between the
 * schedules of an input. All `B·K` schedules run as one batch of a `GenerationSession` whose
 * compute policy is a {@link RecordingPolicy} over `controller`. The prefix is prefilled once
 * per input: its first `P − 1` tokens into one cache, cloned for each schedule, and the last
 * one on every clone by the session (whose prefill creates the schedules' states). The frozen
 * LM is only read.
 *
 * @returns one group per input, in input order.
 * @throws LetheError `E_ARG` naming `model` (not a model with a `config`), `controller` (not a
 *   `SolController`), `actions` (not an
 *   `ActionSet` of the controller's size), `settings.prefix` / `settings.horizon` /
 *   `settings.groupSize` / `settings.alwaysDense` / `settings.seed` / `settings.firstStream`
 *   (not integers in range; `prefix + horizon` past the model's context),
 *   `settings.temperature` (not finite and positive), `inputs` (empty), `inputs[i].prefix` (as
 *   `settings.prefix`), `inputs[i].document`
 *   (not an `Int32Array` of ids in the vocabulary, or shorter than `P + T + 1`) or
 *   `inputs[i].targets` (not three numbers in [0, 1]); `E_CHECKPOINT` naming `inputSize` when
 *   the controller reads another hidden size than the model's; the model's and controller's own
 *   errors while running.
 */
export async function counterfactualRollouts(
  model: DecoderModel,
  controller: SolController,
  actions: ActionSet,
  inputs: readonly RolloutInput[],
  settings: RolloutSettings,
): Promise<RolloutGroup[]> {
  const { prefixes, horizon, groupSize, temperature, alwaysDense, seed, firstStream } =
    checkRollout(model, controller, actions, inputs, settings);
  const sequences = inputs.length * groupSize;
  const inputOf = (s: number) => inputs[Math.floor(s / groupSize)]!;
  const prefixOf = (s: number) => prefixes[Math.floor(s / groupSize)]!;
  const recorder = new RecordingPolicy({
    controller,
    actions,
    horizon,
    temperature,
    alwaysDense,
    targets: Array.from({ length: sequences }, (_, s) => inputOf(s).targets),
  });
  let bases: KVCache[] | undefined;
  let made = 0;
  const session = new GenerationSession({
    model,
    compute: recorder,
    seed,
    streamIds: Array.from({ length: sequences }, (_, s) => firstStream + s),
    // The session makes one cache per prompt, in prompt order: schedule s clones its input's.
    createCache: (options) => {
      bases ??= prefilledPrefixes(model, options, inputs, prefixes);
      return bases[Math.floor(made++ / groupSize)]!.clone();
    },
  });
  await session.prefill(
    Array.from({ length: sequences }, (_, s) =>
      inputOf(s).document.subarray(prefixOf(s) - 1, prefixOf(s)),
    ),
  );
  const all = Array.from({ length: sequences }, (_, s) => s);
  const rewards = all.map(() => new Float64Array(horizon));
  for (let t = 0; t < horizon; t++) {
    const tokens = Int32Array.from(all, (s) => inputOf(s).document[prefixOf(s) + t]!);
    const { logits } = await session.step(all, tokens);
    all.forEach((s) => {
      rewards[s]![t] = logProbabilityAt(logits[s]!, inputOf(s).document[prefixOf(s) + t + 1]!);
    });
  }
  return inputs.map((input, i) => ({
    targets: input.targets,
    schedules: Array.from({ length: groupSize }, (_, k) => {
      const state = recorder.states[i * groupSize + k]!;
      return {
        ...state.steps,
        rewards: rewards[i * groupSize + k]!,
        realised: state.budget.realised(),
      };
    }),
  }));
}

/** One cache per input holding its first `P − 1` tokens (dense prefill; empty when `P = 1`). */
function prefilledPrefixes(
  model: DecoderModel,
  options: KVCacheOptions,
  inputs: readonly RolloutInput[],
  prefixes: readonly number[],
): KVCache[] {
  const caches = inputs.map(() => new KVCache(options));
  const filled = inputs.flatMap((_, i) => (prefixes[i]! > 1 ? [i] : []));
  if (filled.length > 0) {
    const out = model.prefill(
      filled.map((i) => caches[i]!),
      filled.map((i) => inputs[i]!.document.subarray(0, prefixes[i]! - 1)),
    );
    out.logits.dispose();
    out.hidden.dispose();
  }
  return caches;
}

function checkRollout(
  model: DecoderModel,
  controller: SolController,
  actions: ActionSet,
  inputs: readonly RolloutInput[],
  settings: RolloutSettings,
): Omit<Required<RolloutSettings>, 'prefix'> & { readonly prefixes: number[] } {
  if (typeof model !== 'object' || model === null || typeof model.config !== 'object') {
    throw new LetheError('E_ARG', 'must be a DecoderModel', 'model');
  }
  if (!(controller instanceof SolController)) {
    throw new LetheError('E_ARG', 'must be a SolController', 'controller');
  }
  if (!(actions instanceof ActionSet) || actions.size !== controller.config.actions) {
    throw new LetheError(
      'E_ARG',
      `must be an ActionSet of the controller's ${controller.config.actions} actions`,
      'actions',
    );
  }
  const {
    hidden_size: hiddenSize,
    vocab_size: vocab,
    max_position_embeddings: context,
  } = model.config;
  checkControllerInputSize(controller.config, hiddenSize);
  if (typeof settings !== 'object' || settings === null) {
    throw new LetheError(
      'E_ARG',
      'must be an object { prefix, horizon, groupSize, … }',
      'settings',
    );
  }
  const prefix = assertInteger(settings.prefix, 'settings.prefix', 1);
  const horizon = assertInteger(settings.horizon, 'settings.horizon', 1);
  const { maxHorizon } = controller.config;
  if (horizon > maxHorizon) {
    throw new LetheError(
      'E_ARG',
      `must be at most the controller's maxHorizon ${maxHorizon}, got ${horizon}`,
      'settings.horizon',
    );
  }
  const checkPrefix = (value: number, argument: string) => {
    assertInteger(value, argument, 1);
    if (value + horizon > context) {
      throw new LetheError(
        'E_ARG',
        `prefix + horizon = ${value + horizon} is past the model's context of ${context}`,
        argument,
      );
    }
    return value;
  };
  checkPrefix(prefix, 'settings.prefix');
  const temperature = settings.temperature ?? DEFAULT_SAMPLING_TEMPERATURE;
  if (!(Number.isFinite(temperature) && temperature > 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a finite number > 0, got ${temperature}`,
      'settings.temperature',
    );
  }
  if (!Array.isArray(inputs) || inputs.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of inputs', 'inputs');
  }
  const prefixes = inputs.map((input, i) => {
    const own =
      input?.prefix === undefined ? prefix : checkPrefix(input.prefix, `inputs[${i}].prefix`);
    checkDocument(input?.document, own + horizon + 1, vocab, `inputs[${i}].document`);
    checkTargets(input.targets, `inputs[${i}].targets`);
    return own;
  });
  return {
    prefixes,
    horizon,
    groupSize: assertInteger(settings.groupSize, 'settings.groupSize', 1),
    temperature,
    alwaysDense: assertInteger(settings.alwaysDense ?? 6, 'settings.alwaysDense', 0),
    seed: checkStream(settings.seed ?? 0, 'settings.seed'),
    firstStream: checkStream(settings.firstStream ?? 0, 'settings.firstStream'),
  };
}

/**
 * Checks a training document: an `Int32Array` of at least `length` ids in `[0, vocab)`.
 *
 * @throws LetheError `E_ARG` naming `argument`.
 */
export function checkDocument(
  document: Int32Array,
  length: number,
  vocab: number,
  argument: string,
): void {
  if (!(document instanceof Int32Array)) {
    throw new LetheError('E_ARG', 'must be an Int32Array of token ids', argument);
  }
  if (document.length < length) {
    throw new LetheError(
      'E_ARG',
      `has ${document.length} tokens; needs at least prefix + horizon + 1 = ${length}`,
      argument,
    );
  }
  for (let i = 0; i < length; i++) {
    const id = document[i]!;
    if (!(id >= 0 && id < vocab)) {
      throw new LetheError('E_ARG', `token ${i} is ${id}, outside [0, ${vocab})`, argument);
    }
  }
}

function checkTargets(targets: AxisUsage, argument: string): void {
  const valid =
    Array.isArray(targets) &&
    targets.length === 3 &&
    targets.every((c) => typeof c === 'number' && c >= 0 && c <= 1);
  if (!valid) {
    throw new LetheError(
      'E_ARG',
      `must be [C_κ, C_ρ, C_η], each in [0, 1], got ${JSON.stringify(targets)}`,
      argument,
    );
  }
}

function checkStream(value: number, argument: string): number {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${value}`, argument);
  }
  return value;
}
