import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference policy (`.`) and the training building blocks (`./train`); splitting keeps one
// copy of the gate graph they share.
export default defineConfig(
  packageBuild({ index: 'src/index.ts', train: 'src/train/index.ts' }, { splitting: true }),
);
