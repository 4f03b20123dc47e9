import type { DecoderModel } from '@lethe/model';

/**
 * Where the model of each task comes from. A sweep asks for a task's model once, before its
 * first cell that still has to run, and releases it after the task's last cell (or when the
 * sweep stops early).
 */
export interface ModelProvider {
  /** The model for the task labelled `task` (its registry name unless the sweep labels it). */
  load(task: string): DecoderModel | Promise<DecoderModel>;
  /** Called when the sweep no longer needs `model` (dispose it if the provider owns nothing else). */
  release?(task: string, model: DecoderModel): void;
}
