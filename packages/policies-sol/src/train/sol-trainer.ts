import { LetheError, Rng } from '@lethe/core';
import {
  decodeTrainingCheckpoint,
  encodeTrainingCheckpoint,
  type Float32Tensor,
} from '@lethe/model';
import { processAdvantages } from '@lethe/rl-grpo';
import { AdamW, tf } from '@lethe/tensor';
import type { AxisUsage } from '../actions/action-set';
import { budgetPenalty } from '../budget/budget-penalty';
import { checkControllerInputSize } from '../controller/controller-file';
import {
  CONTROLLER_TENSOR_NAMES,
  checkControllerParameters,
  type SolControllerParameters,
} from '../controller/controller-parameters';
import { SolController } from '../controller/sol-controller';
import { sampleBudgetTargets } from './budget-sampling';
import { ControllerGraph } from './controller-graph';
import {
  counterfactualRollouts,
  type RolloutGroup,
  type RolloutInput,
  type RolloutSettings,
} from './counterfactual-rollout';
import { DocumentSchedule } from './document-schedule';
import { grpoUpdate } from './grpo-update';
import { drawPrefixes } from './prefix-range';
import { penalisedReturns } from './returns';
import {
  resolveTrainerOptions,
  type SolTrainerOptions,
  type SolTrainerSettings,
  type SolUpdateMetrics,
} from './sol-trainer-options';

/** Format name of SOL trainer checkpoints. */
export const SOL_CHECKPOINT_FORMAT = 'lethe-sol-checkpoint';
/** Version written into (and required from) SOL trainer checkpoints. */
export const SOL_CHECKPOINT_VERSION = 1;

/** Outcome of {@link SolTrainer.train}. */
export interface SolTrainResult {
  /** Updates completed. */
  readonly step: number;
  /** True when `signal` stopped the run early. */
  readonly stopped: boolean;
  /** Updates already completed when this call started (> 0 after a resume). */
  readonly resumedFrom: number;
  /** Metrics of the updates this call made. */
  readonly history: readonly SolUpdateMetrics[];
}

/**
 * SOL's controller training (§4, App. B): GRPO with per-sequence budget sampling. Each update
 * draws `B` inputs — a document and targets `(C_κ, C_ρ, C_η)` sampled from the budget ranges —
 * and runs `K` counterfactual schedules of each under teacher forcing with the current
 * controller ({@link counterfactualRollouts}); each schedule's signal is its discounted
 * return-to-go of token log-likelihoods minus its episode penalty (eq. 2–4), turned into
 * process-level advantages (centred per step within the input's group, then whitened over the
 * batch: `processAdvantages` of `@lethe/rl-grpo`); one PPO-clipped update with an entropy bonus
 * follows ({@link grpoUpdate}), gradient clipping and AdamW. The LM is frozen: only the
 * controller's policy tensors train; the value head is not used by GRPO and keeps its values.
 *
 * Every random draw of update `u` comes from streams keyed by `(seed, u)` — targets, the document
 * order, each schedule's action sampling — so the update count is the whole generator position:
 * a checkpoint ({@link exportCheckpoint}: controller tensors, AdamW moments and step, the update
 * count and the configuration) resumed with {@link importCheckpoint} continues bit-identically,
 * and the same options and seed always give the same controller.
 *
 * @example
 * ```ts
 * const trainer = new SolTrainer({
 *   model, actions, documents, prefix: 256, updates: 500,
 *   controller: initControllerParameters(controllerConfig({ inputSize: model.config.hidden_size, actions: actions.size })),
 *   checkpoint: directoryCheckpointStore('runs/sol'), checkpointEvery: 25,
 *   onProgress: (p) => console.log(p.step, p.reward, p.penalty, p.realised, p.targets),
 * });
 * await trainer.train();
 * const { config, tensors } = encodeController(trainer.exportParameters());
 * trainer.dispose();
 * ```
 */
export class SolTrainer {
  /** The run's hyper-parameters, defaults filled in. */
  readonly settings: SolTrainerSettings;
  private readonly options: SolTrainerOptions;
  private readonly graph: ControllerGraph;
  private readonly optimizer: AdamW;
  private readonly documents: DocumentSchedule;
  private completed = 0;
  private running = false;

  /**
   * @throws LetheError as `resolveTrainerOptions` (`E_ARG` naming the bad option); as
   *   `checkControllerParameters` for bad `controller` parameters; `E_ARG` naming `actions` for
   *   an action set of another size than the controller's; `E_CHECKPOINT` naming `inputSize`
   *   when the controller reads another hidden size than the model's; `E_ARG` naming
   *   `documents` or `documents[i]` for a bad document list; AdamW's `E_ARG` naming `beta1`,
   *   `beta2`, `epsilon` or `weightDecay`.
   */
  constructor(options: SolTrainerOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new LetheError('E_ARG', 'must be an object of trainer options', 'options');
    }
    const model = options.model as unknown;
    if (typeof model !== 'object' || model === null || !('config' in model)) {
      throw new LetheError('E_ARG', 'must be a DecoderModel', 'model');
    }
    const { config } = checkControllerParameters(options.controller);
    const settings = resolveTrainerOptions(options, config.maxHorizon);
    if (options.actions.size !== config.actions) {
      throw new LetheError(
        'E_ARG',
        `has ${options.actions.size} actions but the controller has ${config.actions}`,
        'actions',
      );
    }
    const {
      hidden_size: hiddenSize,
      vocab_size: vocab,
      max_position_embeddings: context,
    } = options.model.config;
    checkControllerInputSize(config, hiddenSize);
    this.documents = new DocumentSchedule(
      options.documents,
      settings.seed,
      settings.batchSize,
      settings.prefix,
      settings.horizon,
      context,
      vocab,
    );
    this.graph = new ControllerGraph(options.controller);
    try {
      this.optimizer = new AdamW(this.graph.variables, settings.adam);
    } catch (error) {
      this.graph.dispose();
      throw error;
    }
    this.settings = settings;
    this.options = options;
  }

  /** Updates completed so far. */
  get step(): number {
    return this.completed;
  }

  /**
   * Runs one update: rollouts with the current controller, advantages, the GRPO step.
   *
   * @throws LetheError `E_STATE` naming `loss` / `gradNorm` for a non-finite loss or gradient
   *   norm (the controller is left as it was); `E_ARG` naming `documents(u, b)` for a bad
   *   document from a function source; `E_STATE` naming `rollouts` when a `rollouts` function
   *   returned another number of groups or schedules than asked for, and its own errors; the
   *   model's errors.
   */
  async update(): Promise<SolUpdateMetrics> {
    const started = performance.now();
    const u = this.completed;
    const { model, actions } = this.options;
    const s = this.settings;
    const targetRng = new Rng(s.seed).fork(`targets-${u}`);
    const documents = Array.from({ length: s.batchSize }, (_, b) => this.documents.document(u, b));
    const prefixes = drawPrefixes(
      documents.map((document) => document.prefix),
      new Rng(s.seed).fork(`prefixes-${u}`),
    );
    const inputs: RolloutInput[] = documents.map((document, b) => ({
      document: document.tokens,
      targets: sampleBudgetTargets(s.budgetRanges, actions, targetRng),
      prefix: prefixes[b]!,
    }));
    const controller = this.graph.exportParameters();
    const settings: RolloutSettings = {
      prefix: Math.max(...prefixes),
      horizon: s.horizon,
      groupSize: s.groupSize,
      temperature: s.temperature,
      alwaysDense: s.alwaysDense,
      seed: s.seed,
      firstStream: u * s.batchSize * s.groupSize,
    };
    const groups =
      this.options.rollouts === undefined
        ? await counterfactualRollouts(
            model,
            new SolController(controller),
            actions,
            inputs,
            settings,
          )
        : checkGroups(
            await this.options.rollouts({ controller, actions, inputs, settings }),
            inputs.length,
            s.groupSize,
          );
    const schedules = groups.flatMap((group) => group.schedules);
    const penalties = schedules.map((schedule) =>
      budgetPenalty(schedule.realised, schedule.targets, s.penaltyWeights, s.tolerance),
    );
    const signals = schedules.map((schedule, i) =>
      Array.from(penalisedReturns(schedule.rewards, penalties[i]!, s.gamma)),
    );
    const advantages = new Float32Array(schedules.length * s.horizon);
    processAdvantages(signals, { groupSize: s.groupSize }).forEach((row, i) => {
      advantages.set(row, i * s.horizon);
    });
    const result = await grpoUpdate(this.graph, this.optimizer, schedules, advantages, {
      temperature: s.temperature,
      clipRange: s.clipRange,
      entropyCoefficient: s.entropyCoefficient,
      lr: s.lr,
      maxGradNorm: s.maxGradNorm,
      step: u + 1,
    });
    this.completed = u + 1;
    const realised = schedules.flatMap((schedule) =>
      schedule.realised === undefined ? [] : [schedule.realised],
    );
    return {
      step: this.completed,
      reward: mean(schedules.flatMap((schedule) => Array.from(schedule.rewards))),
      penalty: mean(penalties),
      realised: realised.length === 0 ? undefined : axisMeans(realised),
      targets: axisMeans(inputs.map((input) => input.targets)),
      ...result,
      seconds: (performance.now() - started) / 1000,
    };
  }

  /**
   * Runs (or resumes) the run to `updates`: on the first call of a fresh trainer it resumes from
   * the `checkpoint` store when that holds a checkpoint; it reports every update to
   * `onProgress`, checkpoints every `checkpointEvery` updates, and checkpoints when stopped by
   * `signal` and at the end.
   *
   * @throws LetheError `E_STATE` naming `train` when a `train()` of this trainer is running;
   *   as {@link importCheckpoint} for a stored checkpoint of another run; as {@link update}.
   */
  async train(): Promise<SolTrainResult> {
    if (this.running) throw new LetheError('E_STATE', 'is already running', 'train');
    this.running = true;
    try {
      const { checkpoint, checkpointEvery, signal, onProgress } = this.options;
      const { updates } = this.options;
      if (this.completed === 0 && checkpoint !== undefined) {
        const bytes = await checkpoint.read();
        if (bytes !== undefined) this.importCheckpoint(bytes);
      }
      const resumedFrom = this.completed;
      const startedAt = performance.now();
      const history: SolUpdateMetrics[] = [];
      let stopped = false;
      while (this.completed < updates) {
        if (signal?.aborted) {
          stopped = true;
          break;
        }
        const metrics = await this.update();
        history.push(metrics);
        const elapsedSeconds = (performance.now() - startedAt) / 1000;
        onProgress?.({
          ...metrics,
          totalUpdates: updates,
          elapsedSeconds,
          etaSeconds: (elapsedSeconds / history.length) * (updates - this.completed),
        });
        if (checkpointEvery !== undefined && this.completed % checkpointEvery === 0) {
          await checkpoint!.write(await this.exportCheckpoint());
        }
      }
      if (checkpoint !== undefined) await checkpoint.write(await this.exportCheckpoint());
      return { step: this.completed, stopped, resumedFrom, history };
    } finally {
      this.running = false;
    }
  }

  /** The controller's current parameters (for `encodeController` or a `SolController`). */
  exportParameters(): SolControllerParameters {
    return this.graph.exportParameters();
  }

  /**
   * The trainer's state as checkpoint bytes (safetensors, format {@link SOL_CHECKPOINT_FORMAT}):
   * every controller tensor, the AdamW moments and step, the update count and the
   * configuration's fingerprint.
   */
  async exportCheckpoint(): Promise<Uint8Array> {
    const parameters = new Map<string, Float32Tensor>();
    for (const [name, variable] of this.graph.variables) {
      parameters.set(name, {
        shape: variable.shape,
        data: Float32Array.from(await variable.data()),
      });
    }
    return encodeTrainingCheckpoint(
      {
        step: this.completed,
        parameters,
        optimizer: await this.optimizer.exportState(),
        metadata: { config: this.fingerprint() },
      },
      { format: SOL_CHECKPOINT_FORMAT, version: SOL_CHECKPOINT_VERSION },
    );
  }

  /**
   * Restores the state of {@link exportCheckpoint}: the controller, the optimizer and the update
   * count. Everything is checked before anything changes.
   *
   * @throws LetheError `E_FORMAT` for bytes that are not a SOL checkpoint of this version;
   *   `E_CHECKPOINT` naming `checkpoint` when it was written by a run with another
   *   configuration, `updates` when it is past this run's `updates`, or the tensor that is
   *   missing, extra or of another shape; AdamW's `E_CHECKPOINT` for its moments.
   */
  importCheckpoint(bytes: Uint8Array): void {
    const checkpoint = decodeTrainingCheckpoint(bytes, {
      format: SOL_CHECKPOINT_FORMAT,
      version: SOL_CHECKPOINT_VERSION,
    });
    if (checkpoint.metadata.config !== this.fingerprint()) {
      throw new LetheError(
        'E_CHECKPOINT',
        `was written by a run with another configuration (${checkpoint.metadata.config})`,
        'checkpoint',
      );
    }
    if (checkpoint.step > this.options.updates) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is at update ${checkpoint.step}, past this run's ${this.options.updates}`,
        'updates',
      );
    }
    for (const name of checkpoint.parameters.keys()) {
      if (!(CONTROLLER_TENSOR_NAMES as readonly string[]).includes(name)) {
        throw new LetheError('E_CHECKPOINT', 'is not a tensor of this controller', name);
      }
    }
    for (const [name, variable] of this.graph.variables) {
      const tensor = checkpoint.parameters.get(name);
      if (tensor === undefined) throw new LetheError('E_CHECKPOINT', 'is missing', name);
      if (tensor.shape.join() !== variable.shape.join()) {
        throw new LetheError(
          'E_CHECKPOINT',
          `has shape [${tensor.shape}] but the controller's is [${variable.shape}]`,
          name,
        );
      }
    }
    this.optimizer.importState(checkpoint.optimizer);
    tf.tidy(() => {
      for (const [name, variable] of this.graph.variables) {
        const { shape, data } = checkpoint.parameters.get(name)!;
        variable.assign(tf.tensor(data, [...shape], 'float32'));
      }
    });
    this.completed = checkpoint.step;
  }

  /** Frees the controller's variables and the optimizer's moments. */
  dispose(): void {
    this.optimizer.dispose();
    this.graph.dispose();
  }

  /** The configuration that determines a run's results, as canonical JSON. */
  private fingerprint(): string {
    return JSON.stringify({
      settings: this.settings,
      controller: this.graph.config,
      actions: this.options.actions.levels,
      model: this.options.model.config,
    });
  }
}

/** A `rollouts` function's groups, when there is one per input with `groupSize` schedules each. */
function checkGroups(groups: RolloutGroup[], inputs: number, groupSize: number): RolloutGroup[] {
  const counts = Array.isArray(groups) ? groups.map((group) => group?.schedules?.length) : [];
  if (counts.length !== inputs || counts.some((count) => count !== groupSize)) {
    throw new LetheError(
      'E_STATE',
      `returned groups of [${counts}] schedules; the update asked for ${inputs} groups of ${groupSize}`,
      'rollouts',
    );
  }
  return groups;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

function axisMeans(values: readonly AxisUsage[]): AxisUsage {
  return [
    mean(values.map((v) => v[0])),
    mean(values.map((v) => v[1])),
    mean(values.map((v) => v[2])),
  ];
}
