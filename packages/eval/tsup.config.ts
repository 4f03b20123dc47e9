import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe package and the Node-only parts (`@lethe/eval/node`: sweeps over results
// files, report writer, task models), dual ESM + CJS; and the `lethe` binary, ESM only, with a shebang. The two builds run
// side by side: the library's clean spares the binary's files.
export default defineConfig([
  packageBuild(
    { index: 'src/index.ts', node: 'src/node.ts' },
    { clean: ['!cli.js', '!cli.js.map'] },
  ),
  packageBuild(
    { cli: 'src/cli/main.ts' },
    {
      format: ['esm'],
      dts: false,
      clean: false,
      platform: 'node',
      banner: { js: '#!/usr/bin/env node' },
    },
  ),
]);
