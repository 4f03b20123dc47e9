import { defineProject } from 'vitest/config';

// Tests that run alone, after every package's `test` (the root `npm test` runs `test:alone` with
// turbo's concurrency 1): the runtime on WebGPU through SwiftShader, whose dispatches wait on
// CPU threads that a full parallel test run starves — its 512-step equivalence takes 50 s on an
// idle 2-core machine and passed 600 s beside CI's other suites.
export default defineProject({
  test: { include: ['test/**/*.alone.test.ts'], testTimeout: 60_000 },
});
