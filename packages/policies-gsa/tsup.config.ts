import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// The inference side only for now (`.`); the trainer (`./train`) comes later.
export default defineConfig(packageBuild({ index: 'src/index.ts' }));
