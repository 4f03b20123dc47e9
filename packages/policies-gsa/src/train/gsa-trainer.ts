import { LetheError } from '@lethe/core';
import {
  type DecoderModel,
  type NextTokenBatch,
  SftTrainer,
  type SftTrainerOptions,
  type TrainProgress,
  type TrainResult,
} from '@lethe/model';
import { tf } from '@lethe/tensor';
import { type EvictionInLoopOptions, resolveEviction, sampledBudgets } from './eviction-options';
import type { GateStatistics } from './gate-statistics';
import type { GsaGateVariables } from './gate-variables';
import { type GsaLossWeights, resolveLossWeights } from './loss-weights';
import { distillationTerms, type GsaStage, languageModelTerms } from './stage-terms';
import { type DistillationBatch, withTeacher } from './teacher-batches';

/** One progress report of a {@link GsaTrainer}: the trainer's, plus the loss terms and gates. */
export interface GsaProgress extends TrainProgress, GateStatistics {
  readonly stage: GsaStage;
  /** `L_attn` (stage 1) or `L_LM` (stage 2) of this update's batch, unweighted. */
  readonly taskLoss: number;
  /** `L_gate` of this update's batch, unweighted. */
  readonly gateLoss: number;
  /** `L_ret` of this update's batch, unweighted (only with `retentionWeight` > 0). */
  readonly retentionLoss?: number;
  /**
   * The share of the teacher's attention (of a trained row and KV head, averaged over the
   * retention budgets) that caches evicting by this gate would lose (only with `retentionWeight`
   * > 0).
   */
  readonly lostAttention?: number;
}

/**
 * Configuration of a {@link GsaTrainer} (one stage): `SftTrainer`'s options (steps, seed,
 * schedule, optimizer — the paper: β₂ = 0.95 —, clipping — the paper: 1 —, checkpoint store,
 * resume, signal, clock) without its model and loss, which the stage defines, plus the loss
 * weights.
 */
export interface GsaTrainerOptions
  extends Omit<SftTrainerOptions<NextTokenBatch>, 'model' | 'loss' | 'onProgress'>,
    GsaLossWeights {
  /** The frozen backbone (never updated). */
  readonly model: DecoderModel;
  /** The gate being trained (its variables are the only parameters updated). */
  readonly gate: GsaGateVariables;
  /** Which stage this run trains. */
  readonly stage: GsaStage;
  /** Called after every update. */
  readonly onProgress?: (progress: GsaProgress) => void;
  /**
   * Stage 2 only: eviction in the loop — each update draws a budget per sequence and takes `L_LM`
   * through the cache that evicts by the gate at it (`languageModelTerms`). Default: none.
   */
  readonly eviction?: EvictionInLoopOptions;
}

const STAGES: readonly GsaStage[] = ['distillation', 'language-model'];

/**
 * Trains a GSA gate on a frozen model, one stage per trainer (the paper's §3.3): stage 1
 * (`'distillation'`) minimises `λ_attn · L_attn + λ_gate · L_gate`, stage 2
 * (`'language-model'`) `L_LM + λ_gate · L_gate` with gated attention in every layer; with
 * `retentionWeight` > 0 either adds `λ_ret · L_ret` (`retentionLoss`, scored against the
 * teacher's attention, which stage 2 then captures too). It is
 * `@lethe/model`'s `SftTrainer` over the gate's variables only, so the backbone stays
 * bit-identical, and runs are resumable and reproducible the same way (batches depend only on
 * seed and step). Run stage 2 on the gate stage 1 left (the same {@link GsaGateVariables}).
 *
 * @example
 * ```ts
 * const gate = new GsaGateVariables(initGateParameters(shape, 'head', { seed: 1 }));
 * const stage1 = new GsaTrainer({ model, gate, stage: 'distillation', batches, steps: 200, seed: 1,
 *   schedule: () => 1e-3, clipNorm: 1, optimizer: { beta2: 0.95 } });
 * await stage1.train();
 * stage1.dispose();
 * ```
 */
export class GsaTrainer {
  private readonly trainer: SftTrainer<NextTokenBatch>;
  /** `[L_task, L_gate, mean g, low, high(, L_ret, lost)]` of the update in flight, read after it. */
  private pending: tf.Tensor1D | undefined;

  /**
   * @throws LetheError `E_ARG` naming `stage`, `attentionWeight`, `gateWeight`,
   *   `retentionWeight`, `retention.*`, the gate's
   *   `gate.hiddenSize` / `gate.layers` / `gate.kvHeads` when it does not fit `model`, or any
   *   option `SftTrainer` rejects.
   */
  constructor(options: GsaTrainerOptions) {
    const { model, gate, stage } = options;
    if (!STAGES.includes(stage)) {
      throw new LetheError(
        'E_ARG',
        `must be one of ${STAGES.join(', ')}, got ${JSON.stringify(stage)}`,
        'stage',
      );
    }
    checkGateFits(gate, model);
    const eviction = options.eviction === undefined ? undefined : resolveEviction(options.eviction);
    if (eviction !== undefined && stage !== 'language-model') {
      throw new LetheError(
        'E_ARG',
        'applies to stage 2 (language-model) only: stage 1 runs no forward to evict in',
        'eviction',
      );
    }
    const { attentionWeight, gateWeight, penalty, retentionWeight, retention } =
      resolveLossWeights(options);
    const taskWeight = stage === 'distillation' ? attentionWeight : 1;
    const retained = retentionWeight > 0 ? retention : undefined;
    // The rest of the options are SftTrainer's own.
    const {
      model: _model,
      gate: _gate,
      stage: _stage,
      onProgress,
      attentionWeight: _attentionWeight,
      gateWeight: _gateWeight,
      penalty: _penalty,
      retentionWeight: _retentionWeight,
      retention: _retention,
      eviction: _eviction,
      ...trainer
    } = options;
    this.trainer = new SftTrainer<NextTokenBatch>({
      ...trainer,
      model: gate,
      batches:
        stage === 'distillation' || retained !== undefined
          ? withTeacher(model, options.batches)
          : options.batches,
      loss: (batch) => {
        const terms =
          stage === 'distillation'
            ? distillationTerms(gate, batch as DistillationBatch, penalty, retained)
            : languageModelTerms(
                model,
                gate,
                batch,
                penalty,
                retained,
                eviction && {
                  budgets: sampledBudgets(
                    eviction.budgets,
                    batch.inputs.shape[0],
                    options.seed,
                    this.trainer.step,
                  ),
                  anchors: eviction,
                },
              );
        const parts = [tf.stack([terms.task, terms.penalty]), terms.statistics];
        if (terms.retention) parts.push(tf.stack([terms.retention.loss, terms.retention.lost]));
        this.pending?.dispose();
        this.pending = tf.keep(tf.concat(parts) as tf.Tensor1D);
        const loss: tf.Scalar = tf.add(
          tf.mul(terms.task, taskWeight),
          tf.mul(terms.penalty, gateWeight),
        );
        if (terms.retention === undefined) return loss;
        return tf.add(loss, tf.mul(terms.retention.loss, retentionWeight)) as tf.Scalar;
      },
      onProgress: (progress) => {
        const [taskLoss, gateLoss, meanGate, lowFraction, highFraction, retentionLoss, lost] =
          this.takePending(retained === undefined ? 5 : 7);
        onProgress?.({
          ...progress,
          stage,
          taskLoss: taskLoss!,
          gateLoss: gateLoss!,
          meanGate: meanGate!,
          lowFraction: lowFraction!,
          highFraction: highFraction!,
          ...(retained === undefined ? {} : { retentionLoss, lostAttention: lost }),
        });
      },
    });
  }

  /** Updates completed so far (counting those before a resume). */
  get step(): number {
    return this.trainer.step;
  }

  /**
   * Runs the stage's remaining updates (resuming first when a checkpoint is stored).
   *
   * @throws LetheError as `SftTrainer.train` (`E_STATE` on a non-finite loss, `E_CHECKPOINT`
   *   for a checkpoint of another run).
   */
  async train(): Promise<TrainResult> {
    try {
      return await this.trainer.train();
    } finally {
      this.pending?.dispose();
      this.pending = undefined;
    }
  }

  /** Frees the optimizer state (the gate and the model are the caller's). */
  dispose(): void {
    this.pending?.dispose();
    this.pending = undefined;
    this.trainer.dispose();
  }

  private takePending(count: number): number[] {
    const pending = this.pending;
    this.pending = undefined;
    if (pending === undefined) return new Array<number>(count).fill(Number.NaN);
    const values = [...pending.dataSync()];
    pending.dispose();
    return values;
  }
}

/**
 * Refuses a gate sized for another model.
 *
 * @throws LetheError `E_ARG` naming `gate.hiddenSize`, `gate.layers` or `gate.kvHeads`.
 */
function checkGateFits(gate: GsaGateVariables, model: DecoderModel): void {
  const { config } = model;
  const expected = {
    hiddenSize: config.hidden_size,
    layers: config.num_hidden_layers,
    kvHeads: config.num_key_value_heads,
  };
  for (const field of ['hiddenSize', 'layers', 'kvHeads'] as const) {
    if (gate[field] !== expected[field]) {
      throw new LetheError(
        'E_ARG',
        `the gate is for ${field} ${gate[field]}, but the model has ${expected[field]}`,
        `gate.${field}`,
      );
    }
  }
}
