// Writes the Hugging Face model-directory fixtures, fixtures/hf/tiny-llama and
// fixtures/hf/tiny-qwen2 at the repository root, from fixtures/hf/corpus.txt alone: a byte-level
// BPE tokenizer trained on the corpus and a tiny random model per family (see
// scripts/hf-fixtures/fixtures.ts). Deterministic: a run reproduces the committed files byte for
// byte (a test checks it). Run from the root with `npm run fixtures:hf`.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildHfFixtures } from './hf-fixtures/fixtures';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixturesDir = join(root, 'fixtures', 'hf');

const corpus = await readFile(join(fixturesDir, 'corpus.txt'), 'utf8');
for (const [name, files] of Object.entries(buildHfFixtures(corpus))) {
  const target = join(fixturesDir, name);
  const suffix = randomBytes(6).toString('hex');
  const staging = join(fixturesDir, `.${name}.partial-${suffix}`);
  const old = join(fixturesDir, `.${name}.old-${suffix}`);
  await mkdir(staging, { recursive: true });
  try {
    for (const [file, bytes] of Object.entries(files)) await writeFile(join(staging, file), bytes);
    await rename(target, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(staging, target);
    await rm(old, { recursive: true, force: true });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  const bytes = Object.values(files).reduce((sum, file) => sum + file.byteLength, 0);
  console.log(
    `${join('fixtures', 'hf', name)}: ${Object.keys(files).sort().join(', ')} (${(bytes / 1024).toFixed(1)} KiB)`,
  );
}
