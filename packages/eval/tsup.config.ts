import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// Two entries: the browser-safe package and the Node-only report writer (`@lethe/eval/node`).
export default defineConfig(packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }));
