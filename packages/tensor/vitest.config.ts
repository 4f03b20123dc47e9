import { defineProject } from 'vitest/config';

// Hooks do real work here (the WebGPU suite runs every op on wasm and on SwiftShader in its
// beforeAll): on a 2-core CI machine running every package's tests at once that takes far more
// than vitest's default 10 s hook limit.
export default defineProject({
  test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 },
});
