import { LetheError } from '@lethe/core';
import { crossEntropyLoss, type DecoderModel, type NextTokenBatch } from '@lethe/model';
import type { tf } from '@lethe/tensor';
import { logGatesOfLogits } from '../gate/gate-graph';
import { distillationLoss } from './distillation-loss';
import { type EvictionAnchors, evictionMaskHook } from './eviction-mask';
import { type GatePenaltyOptions, gatePenalty } from './gate-penalty';
import { gateStatisticsTensor } from './gate-statistics';
import type { GsaGateVariables } from './gate-variables';
import { type RetentionTerms, retentionLoss } from './retention-loss';
import type { ResolvedRetention } from './retention-options';
import type { DistillationBatch } from './teacher-batches';

/**
 * The two stages of GSA training (the paper's §3.3):
 *
 * - `'distillation'` (stage 1): match the frozen model's attention, `L_attn`;
 * - `'language-model'` (stage 2): next-token cross-entropy through gated attention, `L_LM`.
 */
export type GsaStage = 'distillation' | 'language-model';

/**
 * A stage's terms on one batch. The functions that compute them leave their intermediates (the
 * gate's logits, the gated forward) to the enclosing scope, since the gradient needs them until
 * the backward pass: call them inside `tf.variableGrads` / `tf.tidy` (as {@link GsaTrainer}
 * does).
 */
export interface StageTerms {
  /** `L_attn` (stage 1) or `L_LM` (stage 2). */
  readonly task: tf.Scalar;
  /** `L_gate`. */
  readonly penalty: tf.Scalar;
  /** `[mean g, fraction < 0.1, fraction > 0.9]` over the batch's real tokens. */
  readonly statistics: tf.Tensor1D;
  /** `L_ret` and the attention really lost, when the stage was given `retention`. */
  readonly retention?: RetentionTerms;
}

/**
 * Stage 1's terms: the gate scores the teacher's attention inputs, and its gated version of the
 * teacher's attention is compared with the teacher's over the real query rows
 * (`distillationLoss`). The backbone does not run here: the teacher was captured with the batch.
 */
export function distillationTerms(
  gate: GsaGateVariables,
  batch: DistillationBatch,
  penalty: GatePenaltyOptions,
  retention?: ResolvedRetention,
): StageTerms {
  const logits = batch.teacher.attentionInputs.map((x, l) => gate.logits(l, x));
  const logGates = logits.map((s) => logGatesOfLogits(s, gate.kvHeads));
  return {
    task: distillationLoss(batch.teacher.attention, logGates, batch.inputMask),
    penalty: gatePenalty(logits, penalty, batch.inputMask),
    statistics: gateStatisticsTensor(logits, batch.inputMask),
    ...retentionTerms(batch, logits, retention),
  };
}

/**
 * Stage 2's terms: the frozen model runs with `log g` added to every layer's attention logits
 * (the gate reads each layer's own, already gated, attention input) and `L_LM` is the
 * cross-entropy on the batch's trained targets; the penalty (and `L_ret`, given `retention` and a
 * batch that carries the teacher) scores the same attention inputs. Given `eviction` (eviction in
 * the loop), every layer also hides from each query row what the sequence's cache, evicting by
 * the gate at the sequence's budget, would no longer hold (`evictionMaskHook`): `L_LM` is then
 * the loss the budgeted cache would give, and its gradient reaches the gates of the entries kept.
 */
export function languageModelTerms(
  model: DecoderModel,
  gate: GsaGateVariables,
  batch: NextTokenBatch | DistillationBatch,
  penalty: GatePenaltyOptions,
  retention?: ResolvedRetention,
  eviction?: { readonly budgets: readonly number[]; readonly anchors: EvictionAnchors },
): StageTerms {
  // Inside the forward the gate runs once per layer, for the key bias and the eviction mask
  // alike (its tensors live until the forward's end, so the terms score the captured inputs).
  const layerLogits: tf.Tensor3D[] = [];
  const logitsOf = (l: number, x: tf.Tensor): tf.Tensor3D => {
    layerLogits[l] ??= gate.logits(l, x);
    return layerLogits[l];
  };
  const result = model.forward(batch.inputs, {
    keyBias: (l, x) => logGatesOfLogits(logitsOf(l, x), gate.kvHeads),
    ...(eviction === undefined
      ? {}
      : {
          masks: evictionMaskHook(logitsOf, batch.inputMask, eviction.budgets, eviction.anchors),
        }),
    capture: { attentionInputs: true },
  });
  const logits = result.attentionInputs!.map((x, l) => gate.logits(l, x));
  return {
    task: crossEntropyLoss(result.logits, batch.targets, batch.mask),
    penalty: gatePenalty(logits, penalty, batch.inputMask),
    statistics: gateStatisticsTensor(logits, batch.inputMask),
    ...retentionTerms(batch, logits, retention),
  };
}

/**
 * `{ retention }` for a stage given `retention`, scored against the batch's teacher.
 *
 * @throws LetheError `E_ARG` naming `batch.teacher` when the batch carries none (`withTeacher`).
 */
function retentionTerms(
  batch: NextTokenBatch | DistillationBatch,
  logits: readonly tf.Tensor3D[],
  retention: ResolvedRetention | undefined,
): { retention?: RetentionTerms } {
  if (retention === undefined) return {};
  if (!('teacher' in batch)) {
    throw new LetheError(
      'E_ARG',
      'L_ret needs the teacher’s attention: wrap the batches with withTeacher',
      'batch.teacher',
    );
  }
  const { attention } = batch.teacher;
  return { retention: retentionLoss(attention, logits, batch.mask, batch.inputMask, retention) };
}
