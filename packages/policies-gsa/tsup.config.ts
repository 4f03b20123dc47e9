import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference policy (`.`), the training building blocks (`./train`) and their Node-only part
// (`./train/node`); splitting keeps one copy of the gate graph they share.
export default defineConfig(
  packageBuild(
    { index: 'src/index.ts', train: 'src/train/index.ts', 'train-node': 'src/train/node.ts' },
    { splitting: true },
  ),
);
