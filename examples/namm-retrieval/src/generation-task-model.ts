import { LetheError } from '@lethe/core';
import type { GenerationTask } from '@lethe/eval';
import type { DecoderModel } from '@lethe/model';
import { taskVariant } from '@lethe/task-models';
import { loadTaskModel } from '@lethe/task-models/node';

/** What {@link loadGenerationTaskModel} names in its errors. */
export interface GenerationTaskArguments {
  /** The argument that gave the model directory (e.g. `--model`). */
  readonly model: string;
  /** The argument that gave the task options (e.g. `--task-options`). */
  readonly taskOptions: string;
}

/**
 * The model of a task model directory and the generation task NAMM runs on: the model's task
 * with `taskOptions` over its own (`taskVariant`; e.g. one suite member at one length). The
 * model is disposed when this throws.
 *
 * @throws LetheError `E_ARG` naming `names.model` when the task is not a generation task; the
 *   task's errors for options it refuses, naming `names.taskOptions`; `loadTaskModel`'s.
 */
export async function loadGenerationTaskModel(
  dir: string,
  taskOptions: Readonly<Record<string, unknown>> | undefined,
  names: GenerationTaskArguments,
): Promise<{ model: DecoderModel; task: GenerationTask }> {
  const { model, task: modelTask } = await loadTaskModel(dir);
  try {
    const task = taskVariant(modelTask, taskOptions, names.taskOptions);
    if (task.kind !== 'generation') {
      throw new LetheError(
        'E_ARG',
        `holds a ${task.kind} task; NAMM runs on generation tasks`,
        names.model,
      );
    }
    return { model, task };
  } catch (error) {
    model.dispose();
    throw error;
  }
}
