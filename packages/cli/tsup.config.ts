import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The `lethe` binary, ESM only, with a shebang: `bin/lethe.mjs` (committed, so that installing
// the workspace links `lethe` before the first build) imports `dist/cli.js`.
export default defineConfig(
  packageBuild(
    { cli: 'src/main.ts' },
    { format: ['esm'], dts: false, platform: 'node', banner: { js: '#!/usr/bin/env node' } },
  ),
);
