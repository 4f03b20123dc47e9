import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// Three entries: the browser-safe package, the Node-only file I/O (`@lethe/model/node`) and the
// policy matrix kit (`@lethe/model/testing`). The node entry reads model directories with the
// main entry's reader, decoder and tokenizers, and the kit runs the main entry's `generate()`:
// code splitting keeps one copy of them in a shared chunk, so what `readModelDirectory` returns
// is an `instanceof` the main entry's classes (`CharTokenizer`, `DecoderModel`).
export default defineConfig(
  packageBuild(
    { index: 'src/index.ts', node: 'src/node.ts', testing: 'src/testing/index.ts' },
    { splitting: true },
  ),
);
