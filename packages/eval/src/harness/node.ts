/**
 * The Node-only part of the harness, exported by `@lethe/eval/node`: sweeps that resume from a
 * results file and load task models from checkpoint directories, the results file itself (gzip-
 * compressed when its path ends in `.gz`, as any JSON file `readJsonPath` reads), and
 * the settings guard of resumable training runs.
 *
 * @packageDocumentation
 */
export { checkpointModels } from './checkpoint-models';
export { readJsonPath } from './gzip-json-path';
export { readResultsFile, writeResultsFile } from './node-results-file';
export { lockResultsFile, RESULTS_LOCK_STALE_MS, type ResultsLock } from './results-lock';
export {
  guardRunSettings,
  RUN_SETTINGS_FILE,
  type RunSettingsGuardOptions,
} from './run-settings-guard';
export { type RunSweepOptions, runSweep, type TaskFactory } from './sweep';
export { SWEEP_CELL_KIND, type SweepQueueOptions, sweepCellWorkerModule } from './sweep-queue';
