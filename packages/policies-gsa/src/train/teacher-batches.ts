import type { BatchProvider, DecoderModel, NextTokenBatch } from '@lethe/model';
import { tf } from '@lethe/tensor';

/** What stage 1 reads of the frozen model on a batch: constants, computed without gradients. */
export interface TeacherCapture {
  /** Per layer `[B, Hq, T, T]`: the full model's attention probabilities. */
  readonly attention: tf.Tensor4D[];
  /** Per layer `[B, T, D]`: the attention inputs the gate scores. */
  readonly attentionInputs: tf.Tensor3D[];
}

/** A stage-1 batch: the tokens and the teacher's attention on them. */
export interface DistillationBatch extends NextTokenBatch {
  readonly teacher: TeacherCapture;
}

/**
 * Wraps a batch provider so that every batch also carries the frozen model's attention and
 * attention inputs ({@link TeacherCapture}), computed once per batch outside the gradient tape —
 * the teacher of stage 1's distillation. The trainer disposes them with the batch.
 */
export function withTeacher(
  model: DecoderModel,
  batches: BatchProvider<NextTokenBatch>,
): BatchProvider<DistillationBatch> {
  return (step, rng) => {
    const batch = batches(step, rng);
    try {
      const result = model.forward(batch.inputs, {
        capture: { attention: true, attentionInputs: true },
      });
      result.logits.dispose();
      return {
        ...batch,
        teacher: { attention: result.attention!, attentionInputs: result.attentionInputs! },
      };
    } catch (error) {
      tf.dispose(batch as unknown as tf.TensorContainer);
      throw error;
    }
  };
}
