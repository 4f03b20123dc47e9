import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bareMessage, LetheError } from '@lethe/core';
import {
  CharTokenizer,
  CONFIG_FILE,
  type DecoderModel,
  TOKENIZER_FILE,
  WEIGHTS_FILE,
} from '@lethe/model';
import { readModelDirectory, writeModelDirectory } from '@lethe/model/node';

/** Where the committed quickstart checkpoint lives. */
export const DEFAULT_CHECKPOINT = join(dirname(fileURLToPath(import.meta.url)), '..', 'checkpoint');

/** Writes model + tokenizer as a model directory `dir` (see `writeModelDirectory`). */
export async function saveQuickstart(
  dir: string,
  model: DecoderModel,
  tokenizer: CharTokenizer,
): Promise<void> {
  await writeModelDirectory(dir, { model, tokenizer });
}

/**
 * Loads model + tokenizer from the model directory `dir` (see `readModelDirectory`).
 *
 * @throws LetheError what `readModelDirectory` throws; `E_CHECKPOINT` naming its
 *   `tokenizer.json` when that is not a character tokenizer.
 */
export async function loadQuickstart(
  dir: string,
): Promise<{ model: DecoderModel; tokenizer: CharTokenizer }> {
  const { model, tokenizer } = await readModelDirectory(dir);
  if (!(tokenizer instanceof CharTokenizer)) {
    model.dispose();
    throw new LetheError(
      'E_CHECKPOINT',
      'is not a character tokenizer (the quickstart model is a character model)',
      join(dir, 'tokenizer.json'),
    );
  }
  return { model, tokenizer };
}

/**
 * Loads model + tokenizer from the model directory `dir` given by the flag `flag`: the
 * quickstart never trains a model in its place (`npm run train` does), so an error says what a
 * model directory holds and how to make one.
 *
 * @throws LetheError `E_CHECKPOINT` (or the reader's code for malformed files) naming `flag`, its
 *   message naming the directory or the file at fault and the command that trains a model.
 */
export async function loadQuickstartFrom(
  dir: string,
  flag: string,
): Promise<{ model: DecoderModel; tokenizer: CharTokenizer }> {
  const hint = `train one with \`npm run train -- --out ${dir}\` in examples/quickstart`;
  const kind = await stat(dir).then(
    (found) => (found.isDirectory() ? 'directory' : 'file'),
    () => 'missing',
  );
  if (kind !== 'directory') {
    throw new LetheError(
      'E_CHECKPOINT',
      `${dir} is ${kind === 'missing' ? 'missing' : 'not a directory'}; a model directory holds ${CONFIG_FILE}, ${WEIGHTS_FILE} and ${TOKENIZER_FILE} (${hint})`,
      flag,
    );
  }
  try {
    return await loadQuickstart(dir);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    const about = error.argument === undefined ? '' : `${error.argument} `;
    throw new LetheError(error.code, `${about}${bareMessage(error)} (${hint})`, flag);
  }
}
