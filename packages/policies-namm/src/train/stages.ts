import { assertInteger, LetheError } from '@lethe/core';

/**
 * One stage of incremental evolution (the paper's §3.3): the tasks it adds and how many
 * generations it runs. A stage evolves on its own tasks and those of every earlier stage, with a
 * fresh CMA-ES started at the previous stage's mean.
 */
export interface NammStage {
  /** Names of the tasks this stage adds (at least one, none an earlier stage's). */
  readonly tasks: readonly string[];
  /** Generations the stage runs (integer ≥ 1). */
  readonly generations: number;
}

/**
 * Checks a stage schedule against the known task names.
 *
 * @throws LetheError `E_ARG` naming `stages` (not a non-empty array), `stages[i].generations`
 *   (not an integer ≥ 1), `stages[i].tasks` (empty) or `stages[i].tasks[j]` (an unknown task,
 *   or one an earlier slot already added).
 */
export function checkStages(stages: readonly NammStage[], known: ReadonlySet<string>): void {
  if (!Array.isArray(stages) || stages.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of stages', 'stages');
  }
  const added = new Set<string>();
  stages.forEach((stage, i) => {
    assertInteger(stage.generations, `stages[${i}].generations`, 1);
    const tasks: readonly string[] = stage.tasks;
    if (!Array.isArray(tasks) || tasks.length === 0) {
      throw new LetheError('E_ARG', 'must name at least one task to add', `stages[${i}].tasks`);
    }
    tasks.forEach((name: string, j: number) => {
      const argument = `stages[${i}].tasks[${j}]`;
      if (!known.has(name)) {
        throw new LetheError(
          'E_ARG',
          `no task is named ${JSON.stringify(name)}; known: ${[...known].join(', ')}`,
          argument,
        );
      }
      if (added.has(name)) {
        throw new LetheError('E_ARG', `task "${name}" was already added`, argument);
      }
      added.add(name);
    });
  });
}

/** Generations of every stage together. */
export function totalGenerations(stages: readonly NammStage[]): number {
  return stages.reduce((sum, stage) => sum + stage.generations, 0);
}

/** Index of the stage that runs generation `generation` (0-based over all stages). */
export function stageAt(stages: readonly NammStage[], generation: number): number {
  let end = 0;
  for (let s = 0; s < stages.length; s++) {
    end += stages[s]!.generations;
    if (generation < end) return s;
  }
  return stages.length;
}

/** The tasks stage `stage` evolves on: its own and every earlier stage's, in order. */
export function stageTasks(stages: readonly NammStage[], stage: number): string[] {
  return stages.slice(0, stage + 1).flatMap((s) => s.tasks);
}
