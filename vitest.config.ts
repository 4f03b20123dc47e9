import { defineConfig } from 'vitest/config';

// Runs every package's and example's tests in one vitest process: `pnpm exec vitest run`.
// (`npm test` runs them per package through turbo, after building each package.)
export default defineConfig({
  test: { projects: ['packages/*', 'examples/*'] },
});
