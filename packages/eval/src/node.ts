/**
 * `@lethe/eval/node`: the Node-only parts: report files written atomically, and tiny task
 * models (pretraining, the task-model directory format and its loader).
 *
 * @packageDocumentation
 */
export * from './pretrain/index';
export * from './report/node';
