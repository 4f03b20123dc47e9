import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { isPlainObject } from '@lethe/eval';
import { writeFileAtomic } from '@lethe/model/node';
import type { TaskModelProbe } from './manifest';

/**
 * File in a training-state directory with the run's time so far, its validation scores and each
 * update's loss.
 */
export const TRAINING_RECORD_FILE = 'lethe-pretrain-record.json';

/** What a run has recorded so far, across the sessions that resumed it. */
export interface TrainingRecord {
  /** Wall-clock seconds spent in updates (validation probes and the final evaluation excluded). */
  trainingSeconds: number;
  /** Validation scores, in step order, one per step. */
  probes: TaskModelProbe[];
  /**
   * Each update's training loss (entry `s − 1` for update `s`; `null` for updates made before a
   * resume from a state that did not record them).
   */
  losses: (number | null)[];
}

/**
 * The record kept in the training-state directory `dir`, or an empty one when there is none
 * (a new run, or a run started before records were kept).
 *
 * @throws LetheError `E_FORMAT` naming the file when it is not a record.
 */
export async function readTrainingRecord(dir: string | undefined): Promise<TrainingRecord> {
  if (dir === undefined) return emptyRecord();
  const path = join(dir, TRAINING_RECORD_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyRecord();
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
  if (
    !isPlainObject(json) ||
    typeof json.trainingSeconds !== 'number' ||
    !(json.trainingSeconds >= 0) ||
    !Array.isArray(json.probes) ||
    !(
      json.losses === undefined ||
      (Array.isArray(json.losses) &&
        json.losses.every((loss) => loss === null || typeof loss === 'number'))
    )
  ) {
    throw new LetheError(
      'E_FORMAT',
      'is not a training record ({ trainingSeconds ≥ 0, probes: [...], losses: [...] })',
      path,
    );
  }
  return {
    trainingSeconds: json.trainingSeconds,
    probes: json.probes as TaskModelProbe[],
    // A record from before each update's loss was kept has none: its updates are unknown.
    losses: (json.losses as (number | null)[] | undefined) ?? [],
  };
}

function emptyRecord(): TrainingRecord {
  return { trainingSeconds: 0, probes: [], losses: [] };
}

/** Writes `record` to the training-state directory `dir` (atomically). */
export async function writeTrainingRecord(dir: string, record: TrainingRecord): Promise<void> {
  // Compact: a long run keeps tens of thousands of losses, rewritten after every update.
  await writeFileAtomic(join(dir, TRAINING_RECORD_FILE), `${JSON.stringify(record)}\n`);
}

/** `probes` with `probe` in its step's place (a step probed again, after a resume, is replaced). */
export function withProbe(
  probes: readonly TaskModelProbe[],
  probe: TaskModelProbe,
): TaskModelProbe[] {
  return [...probes.filter((p) => p.step !== probe.step), probe].sort((a, b) => a.step - b.step);
}
