import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharTokenizer, CONFIG_FILE, DecoderModel, WEIGHTS_FILE } from '@lethe/model';
import { loadCheckpoint, saveCheckpoint, writeFileAtomic } from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';

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

/**
 * Loads model + tokenizer from the model directory `dir` given by the flag `flag`, checking
 * first that it is one: the quickstart never trains a model in its place (`npm run train`
 * does).
 *
 * @throws LetheError `E_CHECKPOINT` naming `flag` when `dir` is missing, not a directory,
 *   lacks one of its three files or cannot be read; the errors of the checkpoint decoder
 *   (`E_FORMAT`, `E_CHECKPOINT`) for malformed files.
 */
export async function loadQuickstartFrom(
  dir: string,
  flag: string,
): Promise<{ model: DecoderModel; tokenizer: CharTokenizer }> {
  const hint = `train one with \`npm run train -- --out ${dir}\` in examples/quickstart`;
  const isDirectory = await stat(dir).then(
    (s) => s.isDirectory(),
    () => undefined,
  );
  if (isDirectory !== true) {
    throw new LetheError(
      'E_CHECKPOINT',
      `${dir} is ${isDirectory === undefined ? 'missing' : 'not a directory'}; a model directory holds ${CONFIG_FILE}, ${WEIGHTS_FILE} and ${TOKENIZER_FILE} (${hint})`,
      flag,
    );
  }
  for (const file of [CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE]) {
    if (
      !(await stat(join(dir, file)).then(
        (s) => s.isFile(),
        () => false,
      ))
    ) {
      throw new LetheError(
        'E_CHECKPOINT',
        `${dir} has no ${file}: not a model directory (${hint})`,
        flag,
      );
    }
  }
  try {
    return await loadQuickstart(dir);
  } catch (error) {
    if (error instanceof LetheError) throw error;
    throw new LetheError(
      'E_CHECKPOINT',
      `${dir} cannot be read: ${(error as Error).message}`,
      flag,
    );
  }
}
