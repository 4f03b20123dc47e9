/**
 * `@lethe/eval`: seeded tasks with exact verifiers, metrics, resumable policy × budget sweeps
 * and Markdown/HTML reports. Node-only file output is in `@lethe/eval/node`.
 *
 * @packageDocumentation
 */
export * from './harness/index';
export * from './metrics/index';
export * from './report/index';
export * from './tasks/index';
