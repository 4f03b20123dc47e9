import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe names and shapes (`.`) and the Node-only coordinator and worker (`./node`:
// Redis clients, worker threads, the file system), split so the two share one copy of the
// modules they have in common.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }, { splitting: true }),
);
