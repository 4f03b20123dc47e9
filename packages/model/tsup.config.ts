import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base';

// Two entries: the browser-safe package and the Node-only file I/O (`@lethe/model/node`). The
// node entry reads model directories with the main entry's reader, decoder and tokenizers:
// code splitting keeps one copy of them in a shared chunk, so what `readModelDirectory` returns
// is an `instanceof` the main entry's classes (`CharTokenizer`, `DecoderModel`).
export default defineConfig(
  packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }, { splitting: true }),
);
