import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference controller (`.`, plain typed arrays, no tensor library), its tfjs twin and the
// trainer (`./train`) and their Node-only part (`./train/node`); splitting keeps one copy of the
// modules they share.
export default defineConfig(
  packageBuild(
    { index: 'src/index.ts', train: 'src/train/index.ts', 'train-node': 'src/train/node.ts' },
    { splitting: true },
  ),
);
