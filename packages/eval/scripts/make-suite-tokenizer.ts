// Writes src/tasks/suite-tokenizer.json (see suite-tokenizer-build.ts), atomically. Run from
// packages/eval with `npx tsx scripts/make-suite-tokenizer.ts`.
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildSuiteTokenizerJson } from './suite-tokenizer-build';

const target = join(import.meta.dirname, '..', 'src', 'tasks', 'suite-tokenizer.json');
const staging = `${target}.partial`;
await writeFile(staging, `${JSON.stringify(buildSuiteTokenizerJson())}\n`);
await rename(staging, target);
console.log(`wrote ${target}`);
