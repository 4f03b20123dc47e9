import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The browser-safe registry of every policy package and the store's contract, and the Node-only
// store over directories on disk (`@lethe/policies/node`).
export default defineConfig(packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }));
