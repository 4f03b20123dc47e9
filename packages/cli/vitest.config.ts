import { defineProject } from 'vitest/config';

// Hooks start Chromium and load models; on a loaded 2-core CI machine that can pass 10 s.
export default defineProject({
  test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
