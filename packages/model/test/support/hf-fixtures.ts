import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's Hugging Face fixtures (`fixtures/hf`, made by `npm run fixtures:hf`). */
export const HF_FIXTURES = fileURLToPath(new URL('../../../../fixtures/hf/', import.meta.url));

/** The fixture model directories and the family each imitates. */
export const HF_FIXTURE_DIRS = [
  ['tiny-llama', 'llama3'],
  ['tiny-qwen2', 'qwen2'],
] as const;

/** The parsed JSON file `file` of fixture `dir`. */
export function fixtureJson(dir: string, file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(`${HF_FIXTURES}${dir}/${file}`, 'utf8'));
}
