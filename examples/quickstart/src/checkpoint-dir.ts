import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharTokenizer, DecoderModel } from '@lethe/model';
import { loadCheckpoint, saveCheckpoint, writeFileAtomic } from '@lethe/model/node';

/** Where the committed quickstart checkpoint lives. */
export const DEFAULT_CHECKPOINT = join(dirname(fileURLToPath(import.meta.url)), '..', 'checkpoint');

/** Tokenizer file written beside config.json and model.safetensors. */
export const TOKENIZER_FILE = 'tokenizer.json';

/** Writes model + tokenizer into `dir` (each file atomically). */
export async function saveQuickstart(
  dir: string,
  model: DecoderModel,
  tokenizer: CharTokenizer,
): Promise<void> {
  await saveCheckpoint(dir, { config: model.config, tensors: model.toTensors() });
  const json = `${JSON.stringify(tokenizer.toJSON(), null, 2)}\n`;
  await writeFileAtomic(join(dir, TOKENIZER_FILE), new TextEncoder().encode(json));
}

/** Loads model + tokenizer from `dir`. */
export async function loadQuickstart(
  dir: string,
): Promise<{ model: DecoderModel; tokenizer: CharTokenizer }> {
  const checkpoint = await loadCheckpoint(dir);
  const tokenizer = CharTokenizer.fromJSON(
    JSON.parse(await readFile(join(dir, TOKENIZER_FILE), 'utf8')),
  );
  return { model: DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors), tokenizer };
}
