import type { GateGranularity } from '@lethe/policies-gsa';
import type { GatePenaltyKind } from '@lethe/policies-gsa/train';

/** Everything that determines a trained gate: a run directory is tied to one of these. */
export interface GateRunSettings {
  /** Task-model directory (the task, and the frozen backbone unless `weights` is set). */
  readonly model: string;
  /** A directory whose weights replace the task model's (same shape), or null. */
  readonly weights: string | null;
  /**
   * Options over the task model's task (`taskVariant`), e.g. one suite member at one length on a
   * model trained on the suite's mixture; absent: the model's task as trained.
   */
  readonly taskOptions?: Readonly<Record<string, unknown>>;
  readonly granularity: GateGranularity;
  /** Updates of stage 1 (attention distillation); 0 skips it (the "no stage 1" ablation). */
  readonly stage1Steps: number;
  /** Updates of stage 2 (LM loss through gated attention). */
  readonly stage2Steps: number;
  readonly batchSize: number;
  /** Peak learning rate of both stages (linear warmup, cosine decay to a tenth). */
  readonly lr: number;
  readonly warmup: number;
  readonly seed: number;
  readonly attentionWeight: number;
  readonly gateWeight: number;
  readonly penalty: GatePenaltyKind;
  readonly entropyWeight: number;
  /** Initial final-layer bias of the gate (every gate starts near σ(bias)). */
  readonly initBias: number;
  /** `λ_ret` of both stages (0: the paper's recipe, without the budget-retention term). */
  readonly retentionWeight: number;
  /** The cache sizes `L_ret` trains for, as fractions of each sequence. */
  readonly retentionBudgets: readonly number[];
  /** The sinks and window of the caches `L_ret` scores against. */
  readonly retentionSinks: number;
  readonly retentionWindow: number;
  /** Prompt rows before the answer that `L_ret` scores as well. */
  readonly retentionObservationRows: number;
  /**
   * Stage 2's eviction in the loop (`GsaTrainerOptions.eviction`): the budgets drawn per
   * sequence and the anchors of the caches; absent (the paper's recipe): none.
   */
  readonly eviction?: {
    readonly budgets: readonly number[];
    readonly sinks: number;
    readonly window: number;
  };
}
