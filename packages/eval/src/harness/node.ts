/**
 * The Node-only part of the harness, exported by `@lethe/eval/node`: sweeps that resume from a
 * results file and load task models from checkpoint directories, and the results file itself.
 *
 * @packageDocumentation
 */
export { checkpointModels } from './checkpoint-models';
export { readResultsFile, writeResultsFile } from './node-results-file';
export { type RunSweepOptions, runSweep, type TaskFactory } from './sweep';
