import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference policy and the trainer (`@lethe/policies-ngc/train`); splitting keeps one copy
// of the modules both use.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', train: 'src/train/index.ts' }, { splitting: true }),
);
