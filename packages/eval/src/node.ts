/**
 * `@lethe/eval/node`: the Node-only parts: sweeps (`runSweep`) with their results files and
 * checkpoint-directory models, report files written atomically, and tiny task models
 * (pretraining, the task-model directory format and its loader), and `runMain` for scripts.
 *
 * @packageDocumentation
 */
export { runMain } from './cli/run-main';
export * from './harness/node';
export * from './pretrain/index';
export * from './report/node';
