import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { writeFileAtomic } from '@lethe/model/node';

/** The file a run directory records its settings in. */
export const RUN_SETTINGS_FILE = 'settings.json';

/** Options of {@link guardRunSettings}. */
export interface RunSettingsGuardOptions {
  /**
   * Numeric settings a run may raise when resumed (e.g. a trainer's total `updates`, when its
   * draws depend only on the seed and the update number): a larger value continues the run and
   * is recorded; a smaller one is refused.
   */
  readonly extendable?: readonly string[];
}

/**
 * Ties a run directory to one run of a resumable trainer: records `settings` (a JSON object) in
 * `<out>/settings.json` on first use and refuses a directory recorded for other settings
 * (resuming it would mix two runs), but for a raised `extendable` setting.
 *
 * @throws LetheError `E_ARG` naming `out` and the first differing setting; `E_FORMAT` naming
 *   the settings file when it is not JSON.
 */
export async function guardRunSettings(
  out: string,
  settings: Readonly<Record<string, unknown>>,
  options: RunSettingsGuardOptions = {},
): Promise<void> {
  const path = join(out, RUN_SETTINGS_FILE);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const record = () => writeFileAtomic(path, `${JSON.stringify(settings, null, 2)}\n`);
  if (text === undefined) return record();
  let recorded: Record<string, unknown>;
  try {
    recorded = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
  let raised = false;
  // A setting recorded but not given (or given but not recorded) differs too: absent ≠ present.
  for (const key of new Set([...Object.keys(recorded), ...Object.keys(settings)])) {
    const value = settings[key];
    const before = recorded[key];
    if (JSON.stringify(before) === JSON.stringify(value)) continue;
    const extendable = options.extendable?.includes(key) ?? false;
    if (extendable && typeof before === 'number' && typeof value === 'number' && value > before) {
      raised = true;
      continue;
    }
    throw new LetheError(
      'E_ARG',
      `holds a run with ${key} ${JSON.stringify(before) ?? '(none)'}, not ${JSON.stringify(value) ?? '(none)'}: use another --out${extendable ? ` (${key} may only grow)` : ''}`,
      out,
    );
  }
  if (raised) await record();
}
