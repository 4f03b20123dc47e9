import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { guardRunSettings } from '@lethe/eval/node';
import {
  type BatchProvider,
  modelIdentity,
  type NextTokenBatch,
  warmupCosineSchedule,
} from '@lethe/model';
import { directoryCheckpointStore, writeFileAtomic, writePolicyDirectory } from '@lethe/model/node';
import { gsaPolicyContents, initGateParameters } from '@lethe/policies-gsa';
import {
  GsaGateVariables,
  type GsaProgress,
  type GsaStage,
  GsaTrainer,
} from '@lethe/policies-gsa/train';
import {
  generationBatches,
  taskVariant,
  textWindowBatches,
  trainingSeed,
} from '@lethe/task-models';
import { heldOutPrompts, loadTaskBackbone, type TaskModel } from '@lethe/task-models/node';
import type { GateRunSettings } from './run-settings';

/** The held-out prompts never trained on: the first this many of evaluation seed 0. */
export const HELD_OUT_EXAMPLES = 256;
/** Tokens per training window of a language-modelling task model. */
export const LM_WINDOW = 257;
/** Updates whose examples are sorted by length together (less padding). */
const BUCKET_STEPS = 8;

/** How a {@link trainGates} call ended. */
export interface TrainGatesResult {
  /** True when `signal` stopped it (the checkpoints hold the state; rerun to resume). */
  readonly stopped: boolean;
  /** The last progress report of each stage that ran in this call. */
  readonly last: Partial<Record<GsaStage, GsaProgress>>;
  /** The policy directory, written when both stages are complete. */
  readonly policyDir?: string;
}

/** Options of {@link trainGates}. */
export interface TrainGatesOptions {
  readonly onProgress?: (progress: GsaProgress) => void;
  readonly signal?: AbortSignal;
  /** Checkpoint every this many updates (default 25). */
  readonly checkpointEvery?: number;
}

/**
 * The training batches of a gate run: the training examples of the task model's task (or of its
 * variant under `settings.taskOptions`), held-out prompts excluded.
 *
 * @throws LetheError the task's error for an option it refuses, naming `taskOptions`.
 */
export function taskBatches(
  taskModel: TaskModel,
  settings: GateRunSettings,
): BatchProvider<NextTokenBatch> {
  const task = taskVariant(taskModel.task, settings.taskOptions, 'taskOptions');
  const seed = trainingSeed(settings.seed);
  if (task.kind === 'perplexity') {
    return textWindowBatches(task, { seed, batchSize: settings.batchSize, window: LM_WINDOW });
  }
  return generationBatches(task, {
    seed,
    batchSize: settings.batchSize,
    bucketSteps: BUCKET_STEPS,
    exclude: heldOutPrompts(task, 0, HELD_OUT_EXAMPLES),
  });
}

/**
 * Trains a GSA gate on a frozen task model in `out`: stage 1 (`out/distillation/`, skipped when
 * `stage1Steps` is 0) then stage 2 (`out/language-model/`), each checkpointed and resumed by the
 * same call, then writes `out/policy/` (the registry's `gsa` policy directory) and
 * `out/training.json` (the settings and each stage's final report).
 */
export async function trainGates(
  out: string,
  settings: GateRunSettings,
  options: TrainGatesOptions = {},
): Promise<TrainGatesResult> {
  await mkdir(out, { recursive: true });
  await guardRunSettings(out, { ...settings });
  const taskModel = await loadTaskBackbone(settings.model, settings.weights ?? undefined);
  const { model } = taskModel;
  const baseModel = await modelIdentity(model);
  const gate = new GsaGateVariables(
    initGateParameters(
      {
        layers: model.config.num_hidden_layers,
        hiddenSize: model.config.hidden_size,
        kvHeads: model.config.num_key_value_heads,
      },
      settings.granularity,
      { seed: settings.seed, bias: settings.initBias },
    ),
  );
  const last: Partial<Record<GsaStage, GsaProgress>> = {};
  try {
    const batches = taskBatches(taskModel, settings);
    const stages: [GsaStage, number][] = [
      ['distillation', settings.stage1Steps],
      ['language-model', settings.stage2Steps],
    ];
    for (const [stage, steps] of stages) {
      if (steps === 0) continue;
      const trainer = new GsaTrainer({
        model,
        gate,
        stage,
        batches,
        steps,
        seed: settings.seed,
        schedule: warmupCosineSchedule({
          peakLr: settings.lr,
          warmupSteps: Math.min(settings.warmup, steps - 1),
          totalSteps: steps,
          minLrRatio: 0.1,
        }),
        optimizer: { beta2: 0.95 },
        clipNorm: 1,
        attentionWeight: settings.attentionWeight,
        gateWeight: settings.gateWeight,
        penalty: { kind: settings.penalty, entropyWeight: settings.entropyWeight },
        retentionWeight: settings.retentionWeight,
        retention: {
          budgets: settings.retentionBudgets,
          sinks: settings.retentionSinks,
          window: settings.retentionWindow,
          observationRows: settings.retentionObservationRows,
        },
        ...(settings.eviction === undefined || stage !== 'language-model'
          ? {}
          : { eviction: settings.eviction }),
        checkpoint: directoryCheckpointStore(join(out, stage)),
        checkpointEvery: options.checkpointEvery ?? 25,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        onProgress: (progress) => {
          last[stage] = progress;
          options.onProgress?.(progress);
        },
      });
      try {
        const result = await trainer.train();
        if (result.stopped) return { stopped: true, last };
      } finally {
        trainer.dispose();
      }
    }
    const policyDir = join(out, 'policy');
    await writePolicyDirectory(policyDir, gsaPolicyContents(gate.snapshot(), { baseModel }));
    await writeFileAtomic(
      join(out, 'training.json'),
      `${JSON.stringify({ settings, last }, null, 2)}\n`,
    );
    return { stopped: false, last, policyDir };
  } finally {
    gate.dispose();
    model.dispose();
  }
}
