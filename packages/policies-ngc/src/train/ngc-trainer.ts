import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import {
  type CheckpointStore,
  type DecoderModel,
  decodeTrainingCheckpoint,
  encodeTrainingCheckpoint,
} from '@lethe/model';
import { AdamW, tf } from '@lethe/tensor';
import { NgcPolicy, type NgcSettings } from '../ngc-policy';
import { checkMetaToken, collectRollouts } from './collect-rollouts';
import { evictionRateAt, type StaircaseCurriculum, validateCurriculum } from './curriculum';
import { type RolloutFunction, sampleGroupBatch } from './group-batch';
import { learnerUpdate, type NgcVariant } from './learner-update';
import type { NgcTask } from './ngc-task';

/** Format name of NGC trainer checkpoints. */
export const NGC_CHECKPOINT_FORMAT = 'lethe-ngc-checkpoint';
/** Version written into (and required from) NGC trainer checkpoints. */
export const NGC_CHECKPOINT_VERSION = 1;

/** NGC settings the trainer runs rollouts with (the rate comes from the curriculum). */
export type NgcRolloutSettings = Required<Omit<NgcSettings, 'mode'>> & { readonly cadence: number };

/** Configuration of an {@link NgcTrainer}. Everything but the callbacks is recorded in checkpoints. */
export interface NgcTrainerOptions<E> {
  readonly model: DecoderModel;
  readonly task: NgcTask<E>;
  /** NGC, or one of the paper's ablations / the no-eviction baseline (§5.2.2). */
  readonly variant: NgcVariant;
  /** Total updates. */
  readonly steps: number;
  /** Distinct prompts per update. */
  readonly promptsPerStep: number;
  /** Rollouts per prompt G. */
  readonly groupSize: number;
  /** Retention curriculum (eq. 6); ignored by `'no-evict'`. */
  readonly curriculum: StaircaseCurriculum;
  /** Cadence δ, block size, window and logits of the rollouts' NGC policy. */
  readonly ngc: NgcRolloutSettings;
  /** Rollout sampling temperature. */
  readonly temperature: number;
  /** Most generated tokens per rollout. */
  readonly maxNewTokens: number;
  /** Constant learning rate (paper: constant schedule). */
  readonly lr: number;
  /** AdamW β1, β2, ε and weight decay. */
  readonly adam: {
    readonly beta1: number;
    readonly beta2: number;
    readonly epsilon: number;
    readonly weightDecay: number;
  };
  /** Global gradient-norm bound. */
  readonly clipNorm: number;
  /** Rollouts per replay forward. */
  readonly microBatch: number;
  /** Zero the reward of rollouts shorter than the cadence (App. A.1). */
  readonly minLengthPenalty: boolean;
  /** Seed of the rollouts' sampling and eviction streams. */
  readonly seed: number;
  /**
   * Id of NGC's compression meta-token g (App. A.4), forced before every eviction round of the
   * in-process rollouts (`collectRollouts`' `metaToken`; a `rollouts` function gets it from its
   * own settings, e.g. `workerPoolRollouts`'). Default: none.
   */
  readonly metaToken?: number;
  /** Where the single latest checkpoint lives; written every `checkpointEvery` steps and at the end. */
  readonly checkpoint?: CheckpointStore;
  readonly checkpointEvery?: number;
  /** Generates rollouts (default: in this thread with `collectRollouts`). */
  readonly rollouts?: RolloutFunction;
  /** Called after every update. */
  readonly onProgress?: (progress: NgcProgress) => void;
  /** Stops before the next update (a checkpoint is written first). */
  readonly signal?: AbortSignal;
}

/** What one training step measured. */
export interface NgcStepMetrics {
  /** Updates completed (1 after the first). */
  readonly step: number;
  /** Eviction rate ε of this step's rollouts (0: none). */
  readonly evictionRate: number;
  /** Mean reward after the min-length penalty. */
  readonly reward: number;
  /** Mean task reward (accuracy for 0/1 rewards). */
  readonly accuracy: number;
  /**
   * The values of the on-policy surrogates whose gradients are the update's (ρ = 1; see
   * `learnerUpdate`): not eq. 3–5's values. `tokenLoss` is −(1/G) Σ_i A_i · |o_i| (a rollout's
   * scored tokens); `memoryLoss` is 0 up to float rounding by construction (each rollout's round
   * weights sum to 1 and the advantages of a group to 0) even where its gradient is not — measure
   * that apart (the Countdown example's `gradient-split`).
   */
  readonly loss: number;
  readonly tokenLoss: number;
  readonly memoryLoss: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  /** Mean generated tokens per rollout. */
  readonly completionLength: number;
  /** Mean peak KV entries per rollout (all layers and heads). */
  readonly peakEntries: number;
  /** Mean eviction rounds per rollout and layer. */
  readonly rounds: number;
  /** Wall time of the step in seconds. */
  readonly seconds: number;
}

/** A progress report: the step's metrics plus the run's position. */
export interface NgcProgress extends NgcStepMetrics {
  readonly totalSteps: number;
  readonly elapsedSeconds: number;
  readonly etaSeconds: number;
}

/** Outcome of {@link NgcTrainer.train}. */
export interface NgcTrainResult {
  readonly step: number;
  readonly stopped: boolean;
  readonly resumedFrom: number;
  /** Metrics of every step of the run, resumed steps included. */
  readonly history: readonly NgcStepMetrics[];
}

/**
 * End-to-end NGC training (§4.4–4.6): per step, G rollouts of each prompt with sampled evictions
 * at the curriculum's rate, outcome rewards (with the min-length penalty), Dr. GRPO advantages
 * (group mean subtracted, no std, no length normalisation), one on-policy update of
 * L = L_token + L_mem from a replay forward (see {@link learnerUpdate}), gradient clipping and
 * AdamW. Checkpoints hold the weights, the optimizer, the step, the metrics history and the
 * configuration; a resumed run continues bit-identically. A non-finite loss or gradient norm
 * stops training with the step number and leaves the last good checkpoint untouched.
 */
export class NgcTrainer<E> {
  readonly optimizer: AdamW;
  private readonly options: NgcTrainerOptions<E>;
  private completed = 0;
  private history: NgcStepMetrics[] = [];

  /** @throws LetheError `E_ARG` naming the bad option. */
  constructor(options: NgcTrainerOptions<E>) {
    validateTrainerOptions(options);
    this.options = options;
    this.optimizer = new AdamW(options.model.parameters, { ...options.adam });
  }

  /** Runs (or resumes) training to `steps`. */
  async train(): Promise<NgcTrainResult> {
    const { options } = this;
    const resumedFrom = await this.resume();
    const startedAt = performance.now();
    let stopped = false;
    while (this.completed < options.steps) {
      if (options.signal?.aborted) {
        stopped = true;
        break;
      }
      const metrics = await this.step();
      this.completed++;
      this.history.push(metrics);
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      const done = this.completed - resumedFrom;
      options.onProgress?.({
        ...metrics,
        totalSteps: options.steps,
        elapsedSeconds,
        etaSeconds: (elapsedSeconds / done) * (options.steps - this.completed),
      });
      if (options.checkpointEvery !== undefined && this.completed % options.checkpointEvery === 0) {
        await this.save();
      }
    }
    await this.save();
    return { step: this.completed, stopped, resumedFrom, history: [...this.history] };
  }

  /** Releases the optimizer state (the model stays the caller's). */
  dispose(): void {
    this.optimizer.dispose();
  }

  private async step(): Promise<NgcStepMetrics> {
    const { options } = this;
    const started = performance.now();
    const step = this.completed;
    const rate = options.variant === 'no-evict' ? 0 : evictionRateAt(options.curriculum, step);
    const { rollouts, rewards, shaped, advantages } = await sampleGroupBatch(
      options.task,
      step,
      rate,
      { ...options, cadence: options.ngc.cadence },
      options.rollouts ?? this.inProcess,
    );
    const update = await learnerUpdate(options.model, this.optimizer, rollouts, advantages, {
      variant: options.variant,
      microBatch: options.microBatch,
      clipNorm: options.clipNorm,
      lr: options.lr,
      step: step + 1,
      temperature: options.temperature,
      logits: options.ngc.logits,
    });
    const layers = options.model.config.num_hidden_layers;
    return {
      step: step + 1,
      evictionRate: rate,
      reward: mean(shaped),
      accuracy: mean(rewards),
      ...update,
      completionLength: mean(rollouts.map((r) => r.tokens.length)),
      peakEntries: mean(rollouts.map((r) => r.peakEntries)),
      rounds: mean(rollouts.map((r) => r.rounds.length / layers)),
      seconds: (performance.now() - started) / 1000,
    };
  }

  private readonly inProcess: RolloutFunction = (requests) =>
    collectRollouts(requests, {
      model: this.options.model,
      ngc: this.options.ngc,
      maxNewTokens: this.options.maxNewTokens,
      temperature: this.options.temperature,
      stop: this.options.task.stop,
      seed: this.options.seed,
      metaToken: this.options.metaToken,
    });

  private async resume(): Promise<number> {
    const store = this.options.checkpoint;
    const bytes = store === undefined ? undefined : await store.read();
    if (bytes === undefined) return this.completed;
    const checkpoint = decodeTrainingCheckpoint(bytes, {
      format: NGC_CHECKPOINT_FORMAT,
      version: NGC_CHECKPOINT_VERSION,
    });
    const saved = checkpoint.metadata.config;
    if (saved !== configFingerprint(this.options)) {
      throw new LetheError(
        'E_CHECKPOINT',
        `was written by a run with another configuration (${saved})`,
        'checkpoint',
      );
    }
    if (checkpoint.step > this.options.steps) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is at step ${checkpoint.step}, past ${this.options.steps}`,
        'steps',
      );
    }
    for (const [name, variable] of this.options.model.parameters) {
      const tensor = checkpoint.parameters.get(name);
      if (tensor === undefined) throw new LetheError('E_CHECKPOINT', 'has no such parameter', name);
      if (tensor.shape.join() !== variable.shape.join()) {
        throw new LetheError(
          'E_CHECKPOINT',
          `has shape [${tensor.shape}] but the model's parameter is [${variable.shape}]`,
          name,
        );
      }
      const value = tf.tensor(tensor.data, [...tensor.shape]);
      variable.assign(value);
      value.dispose();
    }
    this.optimizer.importState(checkpoint.optimizer);
    this.history = JSON.parse(checkpoint.metadata.history ?? '[]') as NgcStepMetrics[];
    this.completed = checkpoint.step;
    return this.completed;
  }

  private async save(): Promise<void> {
    const store = this.options.checkpoint;
    if (store === undefined) return;
    const bytes = encodeTrainingCheckpoint(
      {
        step: this.completed,
        parameters: new Map(Object.entries(this.options.model.toTensors())),
        optimizer: await this.optimizer.exportState(),
        metadata: {
          config: configFingerprint(this.options),
          history: JSON.stringify(this.history),
        },
      },
      { format: NGC_CHECKPOINT_FORMAT, version: NGC_CHECKPOINT_VERSION },
    );
    await store.write(bytes);
  }
}

function mean(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return values.length === 0 ? 0 : sum / values.length;
}

/** The options that determine a run's results, as canonical JSON. */
function configFingerprint(options: NgcTrainerOptions<unknown>): string {
  const { variant, steps, promptsPerStep, groupSize, curriculum, ngc, temperature, maxNewTokens } =
    options;
  const { lr, adam, clipNorm, microBatch, minLengthPenalty, seed, metaToken } = options;
  return JSON.stringify({
    variant,
    steps,
    promptsPerStep,
    groupSize,
    curriculum,
    ngc,
    temperature,
    maxNewTokens,
    lr,
    adam,
    clipNorm,
    microBatch,
    minLengthPenalty,
    seed,
    metaToken,
  });
}

function validateTrainerOptions(options: NgcTrainerOptions<unknown>): void {
  assertInteger(options.steps, 'steps', 1);
  assertInteger(options.promptsPerStep, 'promptsPerStep', 1);
  assertInteger(options.groupSize, 'groupSize', 2);
  assertInteger(options.maxNewTokens, 'maxNewTokens', 1);
  assertInteger(options.microBatch, 'microBatch', 1);
  assertInteger(options.ngc.cadence, 'ngc.cadence', 1);
  // The policy's own checks (window ≤ cadence, block size, logits) at any valid rate.
  new NgcPolicy({ ...options.ngc, evictionRate: 1 });
  validateCurriculum(options.curriculum);
  if (!['ngc', 'token-only', 'dropout', 'no-evict'].includes(options.variant)) {
    throw new LetheError('E_ARG', `unknown variant "${options.variant}"`, 'variant');
  }
  assertFiniteInRange(options.temperature, 'temperature', Number.MIN_VALUE);
  assertFiniteInRange(options.lr, 'lr', 0);
  assertFiniteInRange(options.clipNorm, 'clipNorm', Number.MIN_VALUE);
  if (options.checkpointEvery !== undefined)
    assertInteger(options.checkpointEvery, 'checkpointEvery', 1);
  if (options.metaToken !== undefined) checkMetaToken(options.metaToken, options.model);
}
