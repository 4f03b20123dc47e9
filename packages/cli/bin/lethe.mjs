#!/usr/bin/env node
// The `lethe` binary. The CLI itself is built into dist/cli.js; this committed file is the bin
// target so that installing the workspace links `lethe` before the first build (a bin pointing
// at dist/ made pnpm warn "Failed to create bin" for every package depending on @lethe/cli).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write(
    `lethe: the CLI is not built yet (${fileURLToPath(cli)} is missing): run \`npm run build\` at the root of the Lethe repository first\n`,
  );
  process.exit(1);
}
await import(cli.href);
