import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe package and the Node-only parts (`@lethe/eval/node`: sweeps over results
// files, the report writer, `runMain`), dual ESM + CJS.
export default defineConfig(packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }));
