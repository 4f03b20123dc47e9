import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  CharTokenizer,
  CONFIG_FILE,
  DecoderModel,
  decodeCheckpoint,
  type ModelConfig,
  parseModelConfig,
  WEIGHTS_FILE,
} from '@lethe/model';
import { readFileBytes, saveCheckpoint, writeFileAtomic } from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';
import { inFile, unreadableFile } from './file-errors';

/** Tokenizer file of a model directory (`CharTokenizer.toJSON()`), beside `config.json`. */
export const TOKENIZER_FILE = 'tokenizer.json';

/** A model read from a directory: the decoder, its config and (when present) its tokenizer. */
export interface ModelDirectory {
  readonly config: ModelConfig;
  readonly model: DecoderModel;
  /** `undefined` when the directory has no `tokenizer.json` and it was optional. */
  readonly tokenizer: CharTokenizer | undefined;
}

/** Options of {@link readModelDirectory}. */
export interface ReadModelDirectoryOptions {
  /** Whether `tokenizer.json` must be there (default `true`). */
  readonly tokenizer?: 'required' | 'optional';
}

/**
 * Reads a model directory: `config.json` + `model.safetensors` (the HF layout `saveCheckpoint`
 * of `@lethe/model/node` writes) and `tokenizer.json`. Every error names the file it is about
 * and says why (see `unreadableFile`, `inFile`): a missing or unreadable file (`E_CHECKPOINT`),
 * a config that is not JSON (`E_FORMAT`) or not a valid config (`E_ARG` naming the field),
 * malformed weights (`E_FORMAT`), weights that do not fit the config (`E_CHECKPOINT` listing
 * the tensors), a tokenizer that is not a character tokenizer (`E_FORMAT`) or has more ids
 * than the model (`E_CHECKPOINT`).
 */
export async function readModelDirectory(
  dir: string,
  options: ReadModelDirectoryOptions = {},
): Promise<ModelDirectory> {
  await assertDirectory(dir);
  const configPath = join(dir, CONFIG_FILE);
  const configText = await readText(configPath);
  let configJson: unknown;
  try {
    configJson = JSON.parse(configText);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, configPath);
  }
  let config: ModelConfig;
  try {
    config = parseModelConfig(configJson);
  } catch (error) {
    throw inFile(configPath, error);
  }
  const weightsPath = join(dir, WEIGHTS_FILE);
  let weights: Uint8Array;
  try {
    weights = await readFileBytes(weightsPath);
  } catch (error) {
    throw unreadableFile(weightsPath, error);
  }
  let model: DecoderModel;
  try {
    const checkpoint = decodeCheckpoint({ config: configText, weights });
    model = DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
  } catch (error) {
    throw inFile(weightsPath, error);
  }
  const tokenizerPath = join(dir, TOKENIZER_FILE);
  let tokenizer: CharTokenizer | undefined;
  try {
    tokenizer = await readTokenizer(tokenizerPath, options.tokenizer ?? 'required');
    if (tokenizer !== undefined && tokenizer.vocabSize > config.vocab_size) {
      throw new LetheError(
        'E_CHECKPOINT',
        `has ${tokenizer.vocabSize} ids but the model's vocab_size is ${config.vocab_size}`,
        tokenizerPath,
      );
    }
  } catch (error) {
    model.dispose();
    throw error;
  }
  return { config, model, tokenizer };
}

/** The files {@link writeModelDirectory} writes besides the weights and config. */
export interface ModelDirectoryContents {
  readonly model: DecoderModel;
  readonly tokenizer: CharTokenizer;
  /** Further JSON files by name (e.g. `lethe-model.json`), written after the others. */
  readonly json?: Readonly<Record<string, unknown>>;
}

/**
 * Writes a model directory as a whole: `config.json` + `model.safetensors` (F32, bit-exact),
 * `tokenizer.json` and the extra JSON files go into a fresh sibling directory first, each
 * written atomically; that directory then replaces `dir` by renames, so a reader sees the
 * old directory or the complete new one, never a mix. An existing `dir` is replaced only when
 * it is empty or holds only files a model directory holds (a safeguard against overwriting
 * an unrelated folder).
 *
 * @throws LetheError `E_ARG` naming `dir` when it exists and is not a model directory.
 */
export async function writeModelDirectory(
  dir: string,
  contents: ModelDirectoryContents,
): Promise<void> {
  const extra = Object.keys(contents.json ?? {});
  const own = new Set([CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE, ...extra]);
  const existing = await listDirectory(dir);
  if (existing !== undefined) {
    const foreign = existing.filter((name) => !own.has(name));
    if (foreign.length > 0) {
      throw new LetheError(
        'E_ARG',
        `exists and holds files a model directory does not (${foreign.slice(0, 5).join(', ')}); choose another output directory`,
        dir,
      );
    }
  }
  const suffix = randomBytes(6).toString('hex');
  const staging = join(dirname(dir), `.${basename(dir)}.partial-${suffix}`);
  await mkdir(dirname(dir), { recursive: true });
  try {
    await saveCheckpoint(staging, {
      config: contents.model.config,
      tensors: contents.model.toTensors(),
    });
    await writeFileAtomic(
      join(staging, TOKENIZER_FILE),
      `${JSON.stringify(contents.tokenizer.toJSON(), null, 2)}\n`,
    );
    for (const [name, value] of Object.entries(contents.json ?? {})) {
      await writeFileAtomic(join(staging, name), `${JSON.stringify(value, null, 2)}\n`);
    }
    if (existing === undefined) {
      await rename(staging, dir);
    } else {
      const old = join(dirname(dir), `.${basename(dir)}.old-${suffix}`);
      await rename(dir, old);
      await rename(staging, dir);
      await rm(old, { recursive: true, force: true });
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Checks that `dir` is an existing directory.
 *
 * @throws LetheError `E_CHECKPOINT` naming `dir` when it is missing, unreadable or a file.
 */
export async function assertDirectory(dir: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(dir)).isDirectory();
  } catch (error) {
    throw unreadableFile(dir, error);
  }
  if (!isDirectory) {
    throw new LetheError('E_CHECKPOINT', 'is not a directory (expected a model directory)', dir);
  }
}

/** Entries of `dir`, or `undefined` when it does not exist. */
async function listDirectory(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new LetheError('E_ARG', 'exists and is not a directory', dir);
    }
    throw error;
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw unreadableFile(path, error);
  }
}

async function readTokenizer(
  path: string,
  need: 'required' | 'optional',
): Promise<CharTokenizer | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (need === 'optional' && (error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw unreadableFile(path, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
  try {
    return CharTokenizer.fromJSON(json);
  } catch (error) {
    throw inFile(path, error);
  }
}
