import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe format and training data (`.`) and the Node-only pretraining and loading
// (`./node`); splitting keeps one copy of the modules they share.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }, { splitting: true }),
);
