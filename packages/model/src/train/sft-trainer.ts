import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import {
  AdamW,
  type AdamWOptions,
  type ClippedGradients,
  clipByGlobalNorm,
  globalNorm,
  Rng,
  tf,
} from '@lethe/tensor';
import type { Float32Tensor } from '../io/index';
import type { BatchProvider, TrainBatch } from './batch-provider';
import { decodeSftCheckpoint, encodeSftCheckpoint, type SftCheckpoint } from './checkpoint';
import type { CheckpointStore } from './checkpoint-store';
import type { MicroBatching } from './micro-batches';
import { ProgressMeter, type TrainProgress } from './progress';
import type { LrSchedule } from './schedule';

/** Anything with named float32 variables to train, e.g. a `DecoderModel`. */
export interface Trainable {
  /** Parameters by name; variables with `trainable === false` are left frozen. */
  readonly parameters: ReadonlyMap<string, tf.Variable>;
}

/** Configuration of an {@link SftTrainer}. */
export interface SftTrainerOptions<B extends TrainBatch> {
  /** The model whose trainable parameters are optimized. */
  readonly model: Trainable;
  /** Scalar loss of a batch, computed from the model's variables (e.g. with `crossEntropyLoss`). */
  readonly loss: (batch: B) => tf.Scalar;
  /** Batch of each update, drawn from the per-step fork of the trainer's generator. */
  readonly batches: BatchProvider<B>;
  /**
   * Cuts each update's batch into parts whose gradients are taken one after another and summed
   * by weight before the optimizer step (e.g. `nextTokenMicroBatches(4)`): the same update, up to
   * float rounding, in the memory of a part. Default: the whole batch in one pass.
   */
  readonly microBatches?: MicroBatching<B>;
  /** Total number of updates (integer ≥ 1). */
  readonly steps: number;
  /** Seed of the trainer's generator; batch `s` gets `new Rng(seed).fork(s)`. */
  readonly seed: number | bigint;
  /** Learning rate of each update; must accept every step in [0, steps). */
  readonly schedule: LrSchedule;
  /** AdamW hyper-parameters (PyTorch defaults when omitted). */
  readonly optimizer?: AdamWOptions;
  /** Clip the global gradient norm to this value (> 0); no clipping when omitted. */
  readonly clipNorm?: number;
  /**
   * Where to keep the checkpoint (e.g. `directoryCheckpointStore('runs/sft')` in Node). Written
   * at the end, when stopped by `signal`, and every `checkpointEvery` updates.
   */
  readonly checkpoint?: CheckpointStore;
  /** Also checkpoint after every this many updates (integer ≥ 1; needs `checkpoint`). */
  readonly checkpointEvery?: number;
  /** Continue from the stored checkpoint when there is one. Default true. */
  readonly resume?: boolean;
  /** Called after every update. */
  readonly onProgress?: (progress: TrainProgress) => void;
  /**
   * Awaited after every update (after `onProgress`, before that update's checkpoint write), with
   * the number of updates completed: e.g. a held-out probe of the model every so many updates.
   * It must leave the model's variables as they are.
   */
  readonly afterUpdate?: (step: number) => Promise<void>;
  /** Stops the run before the next update; a checkpoint is written first when configured. */
  readonly signal?: AbortSignal;
  /** Clock in milliseconds for throughput and ETA. Default `performance.now`. */
  readonly now?: () => number;
}

/** Outcome of {@link SftTrainer.train}. */
export interface TrainResult {
  /** Updates completed (all of them unless stopped). */
  readonly step: number;
  /** Loss of the last update made by this call; undefined when it made none. */
  readonly loss: number | undefined;
  /** True when `signal` stopped the run early. */
  readonly stopped: boolean;
  /** The step the run started from (> 0 after a resume). */
  readonly resumedFrom: number;
}

/**
 * Supervised fine-tuning loop: for each step, take a batch, compute the loss and its gradients
 * with `tf.variableGrads`, clip them by global norm, and apply {@link AdamW} at the schedule's
 * learning rate. Batches depend only on `(seed, step)`, and checkpoints hold the trained
 * parameters, the optimizer moments and step, the generator state and a format version, so a
 * run stopped at step k and resumed gives bit-identical parameters to an uninterrupted run (on
 * the same backend). A non-finite loss or gradient norm stops training with `E_STATE` before
 * the bad update is applied.
 *
 * @example
 * ```ts
 * const trainer = new SftTrainer({
 *   model,
 *   loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
 *   batches: sampledBatches(examples, { batchSize: 8, padId: 0 }),
 *   steps: 1000, seed: 1,
 *   schedule: warmupCosineSchedule({ peakLr: 3e-4, warmupSteps: 50, totalSteps: 1000, minLrRatio: 0.1 }),
 *   optimizer: { weightDecay: 0.1, excludeFromWeightDecay: isNormOrBias },
 *   clipNorm: 1, checkpoint: directoryCheckpointStore('runs/sft'), checkpointEvery: 100,
 *   onProgress: (p) => console.log(`${p.step}/${p.totalSteps} loss ${p.loss.toFixed(3)}`),
 * });
 * await trainer.train();
 * trainer.dispose();
 * ```
 */
export class SftTrainer<B extends TrainBatch> {
  /** The optimizer (owned by the trainer). */
  readonly optimizer: AdamW;
  private readonly options: SftTrainerOptions<B>;
  private readonly parameters: Map<string, tf.Variable>;
  /** Parameter name of each variable, keyed by `tf.Variable.name` (how variableGrads names grads). */
  private readonly nameOfVariable = new Map<string, string>();
  private readonly rng: Rng;
  private completed = 0;
  private resumeAttempted = false;
  private running = false;

  /**
   * @throws LetheError `E_ARG` naming the bad option (steps, seed, clipNorm, checkpointEvery,
   * schedule, optimizer fields, model without trainable parameters).
   */
  constructor(options: SftTrainerOptions<B>) {
    assertInteger(options.steps, 'steps', 1);
    if (options.clipNorm !== undefined) {
      assertFiniteInRange(options.clipNorm, 'clipNorm');
      if (options.clipNorm <= 0) {
        throw new LetheError('E_ARG', `must be > 0, got ${options.clipNorm}`, 'clipNorm');
      }
    }
    if (options.checkpointEvery !== undefined) {
      assertInteger(options.checkpointEvery, 'checkpointEvery', 1);
      if (options.checkpoint === undefined) {
        throw new LetheError('E_ARG', 'needs a checkpoint store', 'checkpointEvery');
      }
    }
    // Fails early (E_ARG from the schedule) when the run is longer than the schedule.
    learningRate(options.schedule, options.steps - 1);
    this.rng = new Rng(options.seed);
    this.parameters = new Map([...options.model.parameters].filter(([, v]) => v.trainable));
    if (this.parameters.size === 0) {
      throw new LetheError('E_ARG', 'has no trainable parameters', 'model');
    }
    for (const [name, variable] of this.parameters) this.nameOfVariable.set(variable.name, name);
    this.optimizer = new AdamW(this.parameters, options.optimizer);
    this.options = options;
  }

  /** Updates completed so far. */
  get step(): number {
    return this.completed;
  }

  /**
   * Runs the remaining updates (resuming from the stored checkpoint first, once, unless
   * `resume: false`), reporting progress after each and checkpointing as configured.
   *
   * @throws LetheError `E_STATE` when called while already running, or on a non-finite loss or
   * gradient norm; `E_CHECKPOINT` / `E_FORMAT` for a checkpoint that does not fit this run.
   */
  async train(): Promise<TrainResult> {
    if (this.running) throw new LetheError('E_STATE', 'train() is already running', 'train');
    this.running = true;
    try {
      return await this.run();
    } finally {
      this.running = false;
    }
  }

  /**
   * Loads the stored checkpoint into the model parameters, the optimizer and the step counter.
   * Returns false when the store holds no checkpoint.
   *
   * @throws LetheError `E_STATE` without a `checkpoint` store; `E_FORMAT` for bytes that are not
   * a checkpoint of this version; `E_CHECKPOINT` when its parameters, generator or step do not
   * match this trainer (nothing is changed then).
   */
  async restoreCheckpoint(): Promise<boolean> {
    const bytes = await this.store().read();
    this.resumeAttempted = true;
    if (bytes === undefined) return false;
    this.applyCheckpoint(decodeSftCheckpoint(bytes));
    return true;
  }

  /**
   * Writes the current state (trained parameters, optimizer, step, generator, format version)
   * to the `checkpoint` store.
   *
   * @throws LetheError `E_STATE` without a `checkpoint` store.
   */
  async saveCheckpoint(): Promise<void> {
    const store = this.store();
    const parameters = new Map<string, Float32Tensor>();
    for (const [name, variable] of this.parameters) {
      parameters.set(name, {
        shape: variable.shape,
        data: Float32Array.from(await variable.data()),
      });
    }
    const checkpoint: SftCheckpoint = {
      step: this.completed,
      rng: this.rng.state(),
      parameters,
      optimizer: await this.optimizer.exportState(),
    };
    await store.write(encodeSftCheckpoint(checkpoint));
  }

  /** Frees the optimizer state. The model's variables are not touched. */
  dispose(): void {
    this.optimizer.dispose();
  }

  private async run(): Promise<TrainResult> {
    const { steps, signal, checkpoint, checkpointEvery, onProgress, afterUpdate } = this.options;
    if (checkpoint !== undefined && this.options.resume !== false && !this.resumeAttempted) {
      await this.restoreCheckpoint();
    }
    const resumedFrom = this.completed;
    const meter = new ProgressMeter(
      steps,
      resumedFrom,
      this.options.now ?? (() => performance.now()),
    );
    let loss: number | undefined;
    let savedAt = resumedFrom;
    let stopped = false;
    while (this.completed < steps) {
      if (signal?.aborted) {
        stopped = true;
        break;
      }
      const lr = learningRate(this.options.schedule, this.completed);
      const update = await this.update(lr);
      this.completed++;
      loss = update.loss;
      onProgress?.(meter.report({ step: this.completed, lr, ...update }));
      await afterUpdate?.(this.completed);
      if (checkpointEvery !== undefined && this.completed % checkpointEvery === 0) {
        await this.saveCheckpoint();
        savedAt = this.completed;
      }
    }
    if (checkpoint !== undefined && savedAt !== this.completed) await this.saveCheckpoint();
    return { step: this.completed, loss, stopped, resumedFrom };
  }

  /** One optimizer update; tensors created here are all disposed before it returns. */
  private async update(lr: number): Promise<{ loss: number; gradNorm: number; tokens: number }> {
    const step = this.completed;
    const batch = this.options.batches(step, this.rng.fork(step));
    let summed: { value: tf.Scalar; grads: Map<string, tf.Tensor> } | undefined;
    let clipped: ClippedGradients | undefined;
    try {
      summed = this.gradients(batch);
      const named = summed.grads;
      clipped =
        this.options.clipNorm === undefined
          ? { grads: named, norm: globalNorm(named) }
          : clipByGlobalNorm(named, this.options.clipNorm);
      const [lossValue, normValue] = await Promise.all([summed.value.data(), clipped.norm.data()]);
      const loss = lossValue[0]!;
      const gradNorm = normValue[0]!;
      if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
        throw new LetheError(
          'E_STATE',
          `non-finite ${Number.isFinite(loss) ? 'gradient norm' : 'loss'} at step ${step} (loss ${loss}, gradient norm ${gradNorm}); no update applied`,
          Number.isFinite(loss) ? 'gradNorm' : 'loss',
        );
      }
      this.optimizer.applyGradients(clipped.grads, lr);
      return { loss, gradNorm, tokens: batch.tokens };
    } finally {
      if (summed !== undefined) tf.dispose([summed.value, ...summed.grads.values()]);
      if (clipped !== undefined) tf.dispose([clipped.norm, ...clipped.grads.values()]);
      tf.dispose(batch as unknown as tf.TensorContainer);
    }
  }

  /**
   * The loss of `batch` and its gradients by parameter name: of the whole batch in one pass, or
   * summed by weight over the parts `microBatches` cuts it into (each part disposed once done).
   */
  private gradients(batch: B): { value: tf.Scalar; grads: Map<string, tf.Tensor> } {
    const variables = [...this.parameters.values()];
    const { microBatches } = this.options;
    if (microBatches === undefined) {
      const { value, grads } = tf.variableGrads(() => this.options.loss(batch), variables);
      return { value, grads: this.byParameterName(grads) };
    }
    const parts = microBatches.split(batch);
    let value: tf.Scalar | undefined;
    const sums = new Map<string, tf.Tensor>();
    try {
      for (const part of parts) {
        const taken = tf.variableGrads(
          () => tf.mul(this.options.loss(part.batch), part.weight) as tf.Scalar,
          variables,
        );
        tf.dispose(part.batch as unknown as tf.TensorContainer);
        value = accumulate(value, taken.value);
        for (const [name, grad] of this.byParameterName(taken.grads))
          sums.set(name, accumulate(sums.get(name), grad));
      }
    } catch (error) {
      tf.dispose([...(value === undefined ? [] : [value]), ...sums.values()]);
      tf.dispose(parts.map((part) => part.batch) as unknown as tf.TensorContainer);
      throw error;
    }
    if (value === undefined) {
      throw new LetheError('E_STATE', 'cut the batch into no parts', 'microBatches');
    }
    return { value, grads: sums };
  }

  /** `variableGrads`' gradients keyed by parameter name, variables without one left out. */
  private byParameterName(grads: tf.NamedTensorMap): Map<string, tf.Tensor> {
    const byName = new Map<string, tf.Tensor>();
    for (const [variableName, grad] of Object.entries(grads)) {
      if (grad !== null) byName.set(this.nameOfVariable.get(variableName)!, grad);
    }
    return byName;
  }

  private applyCheckpoint(checkpoint: SftCheckpoint): void {
    const expected = this.rng.state();
    const { key, counter } = checkpoint.rng;
    if (key[0] !== expected.key[0] || key[1] !== expected.key[1] || counter !== expected.counter) {
      throw new LetheError('E_CHECKPOINT', 'was written by a run with another seed', 'seed');
    }
    if (checkpoint.step > this.options.steps) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is at step ${checkpoint.step}, past this run's ${this.options.steps} steps`,
        'steps',
      );
    }
    for (const name of checkpoint.parameters.keys()) {
      if (!this.parameters.has(name)) {
        throw new LetheError('E_CHECKPOINT', 'is not a trainable parameter of the model', name);
      }
    }
    for (const [name, variable] of this.parameters) {
      const saved = checkpoint.parameters.get(name);
      if (saved === undefined)
        throw new LetheError('E_CHECKPOINT', 'missing from the checkpoint', name);
      if (
        saved.shape.length !== variable.rank ||
        saved.shape.some((d, i) => d !== variable.shape[i])
      ) {
        throw new LetheError(
          'E_CHECKPOINT',
          `shape [${saved.shape}] differs from the model's [${variable.shape}]`,
          name,
        );
      }
    }
    this.optimizer.importState(checkpoint.optimizer);
    tf.tidy(() => {
      for (const [name, variable] of this.parameters) {
        variable.assign(
          tf.tensor(checkpoint.parameters.get(name)!.data, variable.shape, 'float32'),
        );
      }
    });
    this.completed = checkpoint.step;
  }

  private store(): CheckpointStore {
    const { checkpoint } = this.options;
    if (checkpoint === undefined) {
      throw new LetheError('E_STATE', 'no checkpoint store configured', 'checkpoint');
    }
    return checkpoint;
  }
}

/** `sum + term` (or `term` alone first), disposing both inputs. */
function accumulate<T extends tf.Tensor>(sum: T | undefined, term: T): T {
  if (sum === undefined) return term;
  const total = tf.add(sum, term) as T;
  tf.dispose([sum, term]);
  return total;
}

/** The schedule's learning rate at `step`, which must be a finite number ≥ 0. */
function learningRate(schedule: LrSchedule, step: number): number {
  const lr = schedule(step);
  if (!(Number.isFinite(lr) && lr >= 0)) {
    throw new LetheError(
      'E_ARG',
      `returned ${lr} at step ${step}; need a finite lr ≥ 0`,
      'schedule',
    );
  }
  return lr;
}
