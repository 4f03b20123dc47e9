/**
 * `@lethe/eval`: seeded tasks with exact verifiers, metrics, the cell runner and policy
 * registry, and Markdown/HTML reports rendered to strings; browser-safe (imports no Node
 * built-in). Node-only parts — resumable sweeps over results files, checkpoint loading, report
 * files, `runMain` for scripts — are in `@lethe/eval/node`.
 *
 * @packageDocumentation
 */
export * from './harness/index';
export * from './metrics/index';
export * from './report/index';
export * from './tasks/index';
