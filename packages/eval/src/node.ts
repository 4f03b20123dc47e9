/**
 * `@lethe/eval/node`: the Node-only parts (report files written atomically).
 *
 * @packageDocumentation
 */
export * from './report/node';
