import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference controller (`.`, plain typed arrays, no tensor library) and its tfjs twin and the
// trainer (`./train`); splitting keeps one copy of the modules they share.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', train: 'src/train/index.ts' }, { splitting: true }),
);
