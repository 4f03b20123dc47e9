import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@lethe/model/node';
import type { ActionPreset } from '@lethe/policies-sol';
import type { PrefixRange } from '@lethe/policies-sol/train';
import { LetheError } from '@lethe/tensor';

/** Everything that determines a trained controller: a run directory is tied to one of these. */
export interface SolRunSettings {
  /** Task-model directory of the frozen LM (a `lethe pretrain` directory of the `lm` task). */
  readonly model: string;
  /** The action set (an App. B preset, or `C-10` for token sparsity alone: κ 0.1, 0.2, …, 1). */
  readonly actions: ActionPreset | 'C-10';
  /** Episode length `T`. */
  readonly horizon: number;
  /** Tokens prefilled densely before each training episode, or a range drawn from per input. */
  readonly prefix: number | PrefixRange;
  /** Inputs per update `B`. */
  readonly batchSize: number;
  /** Schedules per input `K`. */
  readonly groupSize: number;
  /** GRPO updates. */
  readonly updates: number;
  /** AdamW learning rate. */
  readonly lr: number;
  /** Penalty weights `[α_κ, α_ρ, α_η]` of eq. 2 (the reference code's: 100 / 100 / 200). */
  readonly penaltyWeights: readonly [number, number, number];
  /** Controller width. */
  readonly width: number;
  /** Seed of the controller's initialisation and of every draw of the run. */
  readonly seed: number;
}

/** The settings file a run directory records. */
export const RUN_SETTINGS_FILE = 'settings.json';

/**
 * Records `settings` in `out` on first use and refuses a directory recorded for other settings
 * (resuming it would mix two runs) — except more `updates`, which continue the run where it
 * stopped (the trainer's draws depend only on the seed and the update number, and its learning
 * rate is constant, so a run extended to N updates equals one trained for N from the start).
 *
 * @throws LetheError `E_ARG` naming `out` and the first differing setting (or fewer updates).
 */
export async function guardRunSettings(out: string, settings: SolRunSettings): Promise<void> {
  const path = join(out, RUN_SETTINGS_FILE);
  let recorded: Record<string, unknown> | undefined;
  try {
    recorded = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (recorded === undefined) {
    await writeFileAtomic(path, `${JSON.stringify(settings, null, 2)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(settings)) {
    const extends_ = key === 'updates' && (value as number) >= (recorded.updates as number);
    if (!extends_ && JSON.stringify(recorded[key]) !== JSON.stringify(value)) {
      throw new LetheError(
        'E_ARG',
        `holds a run with ${key} ${JSON.stringify(recorded[key])}, not ${JSON.stringify(value)}: use another --out`,
        out,
      );
    }
  }
  if (settings.updates !== recorded.updates) {
    await writeFileAtomic(path, `${JSON.stringify(settings, null, 2)}\n`);
  }
}
