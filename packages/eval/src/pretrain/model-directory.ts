import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  CHAT_TEMPLATE_FILE,
  type CharTokenizer,
  ChatTemplate,
  CONFIG_FILE,
  DecoderModel,
  type ModelConfig,
  parseModelConfig,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
  type Tokenizer,
  tokenizerFromJson,
  WEIGHTS_FILE,
} from '@lethe/model';
import {
  decodeWeightFiles,
  readWeightFiles,
  saveCheckpoint,
  type WeightFiles,
  writeFileAtomic,
} from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';
import { inFile, unreadableFile } from './file-errors';

export { TOKENIZER_FILE };

/** Generation settings of a Hugging Face model directory (its EOS ids are read). */
export const GENERATION_CONFIG_FILE = 'generation_config.json';

/** A model read from a directory: the decoder, its config, and what generation needs of it. */
export interface ModelDirectory {
  readonly config: ModelConfig;
  readonly model: DecoderModel;
  /**
   * The tokenizer of `tokenizer.json`: a `CharTokenizer` (task models) or an `HfTokenizer`
   * (Hugging Face directories); `undefined` when there is none and it was optional.
   */
  readonly tokenizer: Tokenizer | undefined;
  /**
   * The chat template (`chat_template.jinja`, else `tokenizer_config.json`'s `chat_template`);
   * `undefined` when there is none and it was optional.
   */
  readonly chatTemplate: ChatTemplate | undefined;
  /**
   * The ids that end a generation: `generation_config.json`'s `eos_token_id` (one id or a list),
   * else `config.json`'s, then the tokenizer's EOS when not among them.
   */
  readonly eosTokenIds: readonly number[];
}

/** Options of {@link readModelDirectory}. */
export interface ReadModelDirectoryOptions {
  /** Whether `tokenizer.json` must be there (default `required`). */
  readonly tokenizer?: 'required' | 'optional';
  /** Whether a chat template must be there (default `optional`). */
  readonly chatTemplate?: 'required' | 'optional';
}

/**
 * Reads a model directory: `config.json` with `model.safetensors` (the layout `saveCheckpoint` of
 * `@lethe/model/node` writes) or with the shards of `model.safetensors.index.json` (a sharded
 * Hugging Face checkpoint), `tokenizer.json` — Lethe's character tokenizer or a Hugging Face
 * tokenizer, with `tokenizer_config.json` for its special tokens — the chat template
 * (`chat_template.jinja` or `tokenizer_config.json`'s) and `generation_config.json` (EOS ids) when
 * present. Every error names the file it is about and says why (see `unreadableFile`,
 * `inFile`): a missing or unreadable file (`E_CHECKPOINT`), a JSON file that is not JSON
 * (`E_FORMAT`), a config that is not valid (`E_ARG` naming the field), malformed weights or
 * shard index (`E_FORMAT`), weights that do not fit the config or shards that disagree with the
 * index (`E_CHECKPOINT` naming the tensor), a tokenizer that is neither kind (`E_FORMAT`) or
 * has more ids than the model (`E_CHECKPOINT`), a required chat template that is missing
 * (`E_CHECKPOINT` naming `tokenizer_config.json`) or does not parse (`E_FORMAT`), EOS ids that
 * are not token ids (`E_FORMAT` naming `generation_config.json`).
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
  const tokenizerConfigPath = join(dir, TOKENIZER_CONFIG_FILE);
  const tokenizerConfig = await readOptionalJson(tokenizerConfigPath);
  const generationConfigPath = join(dir, GENERATION_CONFIG_FILE);
  const eosTokenIds = eosIdsOf(
    await readOptionalJson(generationConfigPath),
    config,
    generationConfigPath,
  );
  const chatTemplate = await readChatTemplate(
    dir,
    tokenizerConfig,
    options.chatTemplate ?? 'optional',
  );
  let weights: WeightFiles;
  try {
    weights = await readWeightFiles(dir);
  } catch (error) {
    const path = (error as NodeJS.ErrnoException).path;
    throw unreadableFile(path ?? join(dir, WEIGHTS_FILE), error);
  }
  let model: DecoderModel;
  try {
    const checkpoint = decodeWeightFiles(configText, weights);
    model = DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
  } catch (error) {
    throw inFile(weights.path, error);
  }
  const tokenizerPath = join(dir, TOKENIZER_FILE);
  let tokenizer: Tokenizer | undefined;
  try {
    tokenizer = await readTokenizer(
      tokenizerPath,
      tokenizerConfig ?? {},
      tokenizerConfigPath,
      options.tokenizer ?? 'required',
    );
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
  const eos = tokenizer?.eosId;
  return {
    config,
    model,
    tokenizer,
    chatTemplate,
    eosTokenIds:
      eos === undefined || eosTokenIds.includes(eos) ? eosTokenIds : [...eosTokenIds, eos],
  };
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
  tokenizerConfig: unknown,
  tokenizerConfigPath: string,
  need: 'required' | 'optional',
): Promise<Tokenizer | undefined> {
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
    return tokenizerFromJson(json, tokenizerConfig, {
      source: path,
      configSource: tokenizerConfigPath,
    });
  } catch (error) {
    throw error instanceof LetheError && error.argument === tokenizerConfigPath
      ? error
      : inFile(path, error);
  }
}

/** The parsed JSON file at `path`, or `undefined` when there is none. */
async function readOptionalJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadableFile(path, error);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
}

/**
 * The chat template of a directory: `chat_template.jinja` when there is one, else the
 * `chat_template` of `tokenizer_config.json`; `undefined` when neither exists, unless `need` is
 * `required` (then `E_CHECKPOINT` naming `tokenizer_config.json`).
 */
async function readChatTemplate(
  dir: string,
  tokenizerConfig: unknown,
  need: 'required' | 'optional',
): Promise<ChatTemplate | undefined> {
  const configPath = join(dir, TOKENIZER_CONFIG_FILE);
  const templatePath = join(dir, CHAT_TEMPLATE_FILE);
  let template: string | undefined;
  try {
    template = await readFile(templatePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw unreadableFile(templatePath, error);
  }
  const inConfig =
    typeof tokenizerConfig === 'object' &&
    tokenizerConfig !== null &&
    ((tokenizerConfig as { chat_template?: unknown }).chat_template ?? null) !== null;
  if (template === undefined && !inConfig && need === 'optional') return undefined;
  if (template === undefined && tokenizerConfig === undefined) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is missing, and so is ${CHAT_TEMPLATE_FILE}: the directory has no chat template`,
      configPath,
    );
  }
  return ChatTemplate.fromTokenizerConfig(tokenizerConfig ?? {}, {
    source: template === undefined ? configPath : templatePath,
    configSource: configPath,
    ...(template === undefined ? {} : { template }),
  });
}

/**
 * The EOS ids a directory declares: `generation_config.json`'s `eos_token_id` (an id or a list
 * of ids in the vocabulary), else `config.json`'s.
 *
 * @throws LetheError `E_FORMAT` naming `path` when the generation config is not an object or its
 *   `eos_token_id` is not such ids.
 */
function eosIdsOf(generationConfig: unknown, config: ModelConfig, path: string): number[] {
  let value: unknown = config.eos_token_id;
  if (generationConfig !== undefined) {
    if (
      typeof generationConfig !== 'object' ||
      generationConfig === null ||
      Array.isArray(generationConfig)
    ) {
      throw new LetheError('E_FORMAT', 'must be a JSON object', path);
    }
    value = (generationConfig as { eos_token_id?: unknown }).eos_token_id ?? value;
  }
  if (value === undefined || value === null) return [];
  const ids = Array.isArray(value) ? value : [value];
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 0 || id >= config.vocab_size) {
      throw new LetheError(
        'E_FORMAT',
        `eos_token_id must be a token id in [0, ${config.vocab_size}) or a list of them, got ${JSON.stringify(value)}`,
        path,
      );
    }
  }
  return [...new Set(ids as number[])];
}
