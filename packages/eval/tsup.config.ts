import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe package, the Node-only parts (`@lethe/eval/node`: sweeps over results files,
// the report writer, `runMain`) and the module the threads of a sweep's pool run, which the pool
// finds next to itself as `sweep-cell-worker.js`; dual ESM + CJS, split so the three share one
// copy of the modules they have in common.
export default defineConfig(
  packageBuild(
    {
      index: 'src/index.ts',
      node: 'src/node.ts',
      'sweep-cell-worker': 'src/harness/sweep-cell-worker.ts',
    },
    { splitting: true },
  ),
);
