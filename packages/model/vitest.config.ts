import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    include: ['test/**/*.test.ts'],
    // run by `test:alone` (vitest.alone.config.ts), after every package's tests
    exclude: ['test/**/*.alone.test.ts'],
    testTimeout: 60_000,
  },
});
