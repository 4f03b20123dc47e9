import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// Two entries: the browser-safe package and the Node-only worker-thread pool
// (`@lethe/rl-grpo/node`). Code splitting puts the modules both use (`RolloutError`, …) in one
// shared chunk, so an error from the pool is an `instanceof` the main entry's class.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }, { splitting: true }),
);
