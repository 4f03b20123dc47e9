/**
 * `@lethe/eval/node`: the Node-only parts: sweeps (`runSweep`) with their results files and
 * checkpoint-directory models, report files written atomically, and `runMain` with the exit
 * codes for scripts (the `lethe` CLI's too). Task models are `@lethe/task-models`; the CLI is
 * `@lethe/cli`.
 *
 * @packageDocumentation
 */
export * from './harness/node';
export * from './report/node';
export {
  EXIT_BAD_INPUT,
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  exitCodeOf,
} from './scripts/exit-codes';
export { runMain } from './scripts/run-main';
