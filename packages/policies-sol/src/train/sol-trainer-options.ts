import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import type { CheckpointStore, DecoderModel } from '@lethe/model';
import { ActionSet, type AxisUsage } from '../actions/action-set';
import { DEFAULT_PENALTY_WEIGHTS, DEFAULT_TOLERANCE } from '../budget/budget-penalty';
import { DEFAULT_SAMPLING_TEMPERATURE } from '../controller/action-choice';
import type { SolControllerParameters } from '../controller/controller-parameters';
import { type BudgetRanges, checkBudgetRanges, DEFAULT_BUDGET_RANGES } from './budget-sampling';
import type { DocumentSource } from './document-schedule';
import { checkPrefix, longestPrefix, type PrefixRange } from './prefix-range';
import { checkDiscount, DEFAULT_DISCOUNT } from './returns';
import type { SolRolloutFunction } from './rollout-function';

/** AdamW's hyper-parameters as the SOL trainer takes them (recorded in checkpoints). */
export interface SolAdamOptions {
  /** Default 0.9. */
  readonly beta1?: number;
  /** Default 0.999. */
  readonly beta2?: number;
  /** Default 1e-8. */
  readonly epsilon?: number;
  /** Decoupled weight decay, applied to every trained tensor (default 0.01, PyTorch's). */
  readonly weightDecay?: number;
}

/** What one update measured. */
export interface SolUpdateMetrics {
  /** Updates completed (1 after the first). */
  readonly step: number;
  /** Mean task reward `r_t` (token log-likelihood) over all schedules and steps. */
  readonly reward: number;
  /** Mean episode penalty `C` (eq. 2) over the schedules. */
  readonly penalty: number;
  /** Mean realised `[κ̄, ρ̄, η̄]` over the schedules with an effective step; undefined without one. */
  readonly realised: AxisUsage | undefined;
  /** Mean requested `[C_κ, C_ρ, C_η]` over the inputs. */
  readonly targets: AxisUsage;
  /** Mean entropy of the sampling distribution, before the update. */
  readonly entropy: number;
  /** The clipped surrogate loss with the entropy bonus, before the update. */
  readonly loss: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  /** Wall time of the update in seconds. */
  readonly seconds: number;
}

/** A progress report, sent after every update of {@link SolTrainer.train}. */
export interface SolProgress extends SolUpdateMetrics {
  /** Updates of the whole run. */
  readonly totalUpdates: number;
  /** Seconds since this `train()` call started. */
  readonly elapsedSeconds: number;
  /** Estimated seconds until `totalUpdates`, from this call's mean update time. */
  readonly etaSeconds: number;
}

/** Configuration of a {@link SolTrainer}; defaults are App. B's. */
export interface SolTrainerOptions {
  /** The frozen LM (never modified). */
  readonly model: DecoderModel;
  /** The action set the controller chooses from. */
  readonly actions: ActionSet;
  /** The controller's starting parameters (`initControllerParameters`, or a saved controller). */
  readonly controller: SolControllerParameters;
  /**
   * The training documents: token ids, each at least `prefix + horizon + 1` tokens (the largest
   * prefix for a range; the first ones are used), or `{ tokens, prefix }` documents whose own
   * prefix replaces the trainer's (e.g. a generation task's prompt and answer).
   */
  readonly documents: DocumentSource;
  /** Total updates of the run. */
  readonly updates: number;
  /**
   * Prefix `P` prefilled densely before each episode (the paper: 1024), or a range `{ min, max }`
   * each input draws its prefix from uniformly (seeded per update), so that episodes start at
   * every position a deployment's episodes do; documents with a prefix of their own use theirs.
   * Optional when every document carries its own.
   */
  readonly prefix?: number | PrefixRange;
  /** Episode length `T` (default 16; at most the controller's `maxHorizon`). */
  readonly horizon?: number;
  /** Inputs per update `B` (default 8). */
  readonly batchSize?: number;
  /** Schedules per input `K`, the GRPO group (default 16; ≥ 2). */
  readonly groupSize?: number;
  /** Discount `γ` of the return-to-go, in (0, 1] (default 0.85). */
  readonly gamma?: number;
  /** Sampling temperature (default 1.3). */
  readonly temperature?: number;
  /** Ranges the per-input targets are drawn from (default App. B.1's). */
  readonly budgetRanges?: BudgetRanges;
  /** Penalty weights `α` (default 100 / 100 / 200). */
  readonly penaltyWeights?: AxisUsage;
  /** Tolerance band `τ` (default 0.02). */
  readonly tolerance?: number;
  /** Entries always read densely (default 6: the runtime's 4 sinks + 2 window). */
  readonly alwaysDense?: number;
  /** PPO clip range (default 0.2). */
  readonly clipRange?: number;
  /** Entropy bonus weight (default 0.05). */
  readonly entropyCoefficient?: number;
  /** AdamW learning rate (default 1e-4). */
  readonly lr?: number;
  /** Global gradient-norm bound (default 2.0). */
  readonly maxGradNorm?: number;
  /** AdamW β1, β2, ε, weight decay (PyTorch defaults). */
  readonly adam?: SolAdamOptions;
  /** Seed of every random draw of the run: targets, document order, action sampling (default 0). */
  readonly seed?: number;
  /**
   * Where the single latest checkpoint lives (e.g. `directoryCheckpointStore` of
   * `@lethe/model/node`): `train()` resumes from it and writes it every `checkpointEvery`
   * updates, when stopped, and at the end.
   */
  readonly checkpoint?: CheckpointStore;
  /** Also checkpoint after every this many updates (needs `checkpoint`). */
  readonly checkpointEvery?: number;
  /** Called after every update of `train()`. */
  readonly onProgress?: (progress: SolProgress) => void;
  /**
   * Runs each update's counterfactual schedules (default: `counterfactualRollouts` on `model` in
   * this thread; `queueSolRollouts` of `@lethe/policies-sol/train/node` puts them on a Redis job
   * queue). The results must equal the default's: the run's fingerprint does not record it.
   */
  readonly rollouts?: SolRolloutFunction;
  /** Stops `train()` before its next update. */
  readonly signal?: AbortSignal;
}

/** The hyper-parameters that determine a run's results, defaults filled in. */
export interface SolTrainerSettings {
  /** Undefined when every document carries its own prefix. */
  readonly prefix: number | PrefixRange | undefined;
  readonly horizon: number;
  readonly batchSize: number;
  readonly groupSize: number;
  readonly gamma: number;
  readonly temperature: number;
  readonly budgetRanges: BudgetRanges;
  readonly penaltyWeights: AxisUsage;
  readonly tolerance: number;
  readonly alwaysDense: number;
  readonly clipRange: number;
  readonly entropyCoefficient: number;
  readonly lr: number;
  readonly maxGradNorm: number;
  readonly adam: Required<SolAdamOptions>;
  readonly seed: number;
}

/**
 * Validates a trainer's options against its model and controller sizes and fills in the
 * defaults.
 *
 * @param maxHorizon the controller's `maxHorizon`.
 * @throws LetheError `E_ARG` naming the bad option: `actions` (not an `ActionSet`), `updates`,
 *   `prefix`, `batchSize` (integers ≥ 1), `groupSize` (≥ 2), `horizon` (in [1, maxHorizon]),
 *   `prefix` when `prefix + horizon` is past the model's context, `gamma` (in (0, 1]),
 *   `temperature`, `clipRange`, `maxGradNorm` (finite, > 0), `budgetRanges.<axis>`,
 *   `penaltyWeights` (three finite numbers ≥ 0), `tolerance`, `entropyCoefficient`, `lr`
 *   (finite, ≥ 0), `alwaysDense` (integer ≥ 0), `adam.<field>`, `seed` (non-negative safe
 *   integer), `checkpointEvery` (integer ≥ 1, with a `checkpoint`), `onProgress` or `rollouts` (not
 *   a function).
 */
export function resolveTrainerOptions(
  options: SolTrainerOptions,
  maxHorizon: number,
): SolTrainerSettings {
  if (!(options.actions instanceof ActionSet)) {
    throw new LetheError('E_ARG', 'must be an ActionSet', 'actions');
  }
  assertInteger(options.updates, 'updates', 1);
  const prefix = options.prefix === undefined ? undefined : checkPrefix(options.prefix);
  const horizon = assertInteger(options.horizon ?? 16, 'horizon', 1);
  if (horizon > maxHorizon) {
    throw new LetheError(
      'E_ARG',
      `must be at most the controller's maxHorizon ${maxHorizon}, got ${horizon}`,
      'horizon',
    );
  }
  const context = options.model.config.max_position_embeddings;
  if (prefix !== undefined && longestPrefix(prefix) + horizon > context) {
    throw new LetheError(
      'E_ARG',
      `prefix + horizon = ${longestPrefix(prefix) + horizon} is past the model's context of ${context}`,
      'prefix',
    );
  }
  const weights = options.penaltyWeights ?? DEFAULT_PENALTY_WEIGHTS;
  if (
    !(
      Array.isArray(weights) &&
      weights.length === 3 &&
      weights.every((w) => Number.isFinite(w) && w >= 0)
    )
  ) {
    throw new LetheError(
      'E_ARG',
      `must be [α_κ, α_ρ, α_η], finite numbers ≥ 0, got ${JSON.stringify(weights)}`,
      'penaltyWeights',
    );
  }
  if (options.checkpointEvery !== undefined) {
    assertInteger(options.checkpointEvery, 'checkpointEvery', 1);
    if (options.checkpoint === undefined) {
      throw new LetheError('E_ARG', 'needs a checkpoint store', 'checkpointEvery');
    }
  }
  for (const name of ['onProgress', 'rollouts'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new LetheError('E_ARG', 'must be a function', name);
    }
  }
  const seed = options.seed ?? 0;
  if (!(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${seed}`, 'seed');
  }
  const adam = options.adam ?? {};
  return {
    prefix,
    horizon,
    batchSize: assertInteger(options.batchSize ?? 8, 'batchSize', 1),
    groupSize: assertInteger(options.groupSize ?? 16, 'groupSize', 2),
    gamma: checkDiscount(options.gamma ?? DEFAULT_DISCOUNT),
    temperature: positive(options.temperature ?? DEFAULT_SAMPLING_TEMPERATURE, 'temperature'),
    budgetRanges: checkBudgetRanges(options.budgetRanges ?? DEFAULT_BUDGET_RANGES),
    penaltyWeights: [weights[0], weights[1], weights[2]],
    tolerance: assertFiniteInRange(options.tolerance ?? DEFAULT_TOLERANCE, 'tolerance', 0),
    alwaysDense: assertInteger(options.alwaysDense ?? 6, 'alwaysDense', 0),
    clipRange: positive(options.clipRange ?? 0.2, 'clipRange'),
    entropyCoefficient: assertFiniteInRange(
      options.entropyCoefficient ?? 0.05,
      'entropyCoefficient',
      0,
    ),
    lr: assertFiniteInRange(options.lr ?? 1e-4, 'lr', 0),
    maxGradNorm: positive(options.maxGradNorm ?? 2, 'maxGradNorm'),
    adam: {
      beta1: adam.beta1 ?? 0.9,
      beta2: adam.beta2 ?? 0.999,
      epsilon: adam.epsilon ?? 1e-8,
      weightDecay: adam.weightDecay ?? 0.01,
    },
    seed,
  };
}

function positive(value: number, argument: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new LetheError('E_ARG', `must be a finite number > 0, got ${value}`, argument);
  }
  return value;
}
