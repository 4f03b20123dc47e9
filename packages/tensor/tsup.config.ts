import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// tfjs-core's gradient registrations are bundled (see src/register-gradients.ts).
export default defineConfig(
  packageBuild({ index: 'src/index.ts' }, { noExternal: [/register_all_gradients/] }),
);
