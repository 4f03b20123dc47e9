import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@lethe/model/node';
import type { GateGranularity } from '@lethe/policies-gsa';
import type { GatePenaltyKind } from '@lethe/policies-gsa/train';
import { LetheError } from '@lethe/tensor';

/** Everything that determines a trained gate: a run directory is tied to one of these. */
export interface GateRunSettings {
  /** Task-model directory (the frozen backbone). */
  readonly model: string;
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
}

/** The settings file a run directory records. */
export const RUN_SETTINGS_FILE = 'settings.json';

/**
 * Records `settings` in `out` on first use and refuses a directory recorded for other settings
 * (resuming it would mix two runs).
 *
 * @throws LetheError `E_ARG` naming `out` and the first differing setting.
 */
export async function guardRunSettings(out: string, settings: GateRunSettings): Promise<void> {
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
    if (recorded[key] !== value) {
      throw new LetheError(
        'E_ARG',
        `holds a run with ${key} ${JSON.stringify(recorded[key])}, not ${JSON.stringify(value)}: use another --out`,
        out,
      );
    }
  }
}
