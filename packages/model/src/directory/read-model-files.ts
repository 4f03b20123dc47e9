import { inFile, LetheError } from '@lethe/core';
import { DecoderModel } from '../decoder/decoder-model';
import { CONFIG_FILE } from '../io/checkpoint';
import { type ModelConfig, parseModelConfig } from '../io/model-config';
import {
  CHAT_TEMPLATE_FILE,
  ChatTemplate,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
  type Tokenizer,
  tokenizerFromJson,
} from '../tokenizer/index';
import type { ModelFiles } from './model-files';
import { decodeWeightFiles, readWeightFiles } from './weight-files';

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

/** Options of {@link readModelFiles}. */
export interface ReadModelDirectoryOptions {
  /** Whether `tokenizer.json` must be there (default `required`). */
  readonly tokenizer?: 'required' | 'optional';
  /** Whether a chat template must be there (default `optional`). */
  readonly chatTemplate?: 'required' | 'optional';
}

/**
 * Reads a model directory through `files`: `config.json` with `model.safetensors` (the layout
 * `saveCheckpoint` of `@lethe/model/node` writes) or with the shards of
 * `model.safetensors.index.json` (a sharded Hugging Face checkpoint), `tokenizer.json` —
 * Lethe's character tokenizer or a Hugging Face tokenizer, with `tokenizer_config.json` for its
 * special tokens — the chat template (`chat_template.jinja` or `tokenizer_config.json`'s) and
 * `generation_config.json` (EOS ids) when present. Browser-safe: `@lethe/model/node`'s
 * `readModelDirectory` is this over a folder on disk. Every error names the file it is about
 * and says why: a missing or unreadable file (`E_CHECKPOINT`), a JSON file that is not JSON
 * (`E_FORMAT`), a config that is not valid (`E_ARG` naming the field), malformed weights or
 * shard index (`E_FORMAT`), weights that do not fit the config or shards that disagree with the
 * index (`E_CHECKPOINT` naming the tensor), a tokenizer that is neither kind (`E_FORMAT`) or has
 * more ids than the model (`E_CHECKPOINT`), a required chat template that is missing
 * (`E_CHECKPOINT` naming `tokenizer_config.json`) or does not parse (`E_FORMAT`), EOS ids that
 * are not token ids (`E_FORMAT` naming `generation_config.json`).
 *
 * @example
 * ```ts
 * const { model, tokenizer } = await readModelFiles(modelFilesFromUrl('/models/retrieval/'));
 * ```
 */
export async function readModelFiles(
  files: ModelFiles,
  options: ReadModelDirectoryOptions = {},
): Promise<ModelDirectory> {
  const configText = await readText(files, CONFIG_FILE, 'required');
  let config: ModelConfig;
  try {
    config = parseModelConfig(parseJson(configText!, files.pathOf(CONFIG_FILE)));
  } catch (error) {
    throw inFile(files.pathOf(CONFIG_FILE), error);
  }
  const tokenizerConfig = await readJson(files, TOKENIZER_CONFIG_FILE);
  const eosTokenIds = eosIdsOf(
    await readJson(files, GENERATION_CONFIG_FILE),
    config,
    files.pathOf(GENERATION_CONFIG_FILE),
  );
  const chatTemplate = await readChatTemplate(
    files,
    tokenizerConfig,
    options.chatTemplate ?? 'optional',
  );
  const weights = await readWeightFiles(files);
  let model: DecoderModel;
  try {
    const checkpoint = decodeWeightFiles(configText!, weights);
    model = DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
  } catch (error) {
    throw inFile(weights.path, error);
  }
  let tokenizer: Tokenizer | undefined;
  try {
    tokenizer = await readTokenizer(files, tokenizerConfig, options.tokenizer ?? 'required');
    if (tokenizer !== undefined && tokenizer.vocabSize > config.vocab_size) {
      throw new LetheError(
        'E_CHECKPOINT',
        `has ${tokenizer.vocabSize} ids but the model's vocab_size is ${config.vocab_size}`,
        files.pathOf(TOKENIZER_FILE),
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

/** The UTF-8 text of file `name`; `undefined` when it is missing and `need` allows it. */
async function readText(
  files: ModelFiles,
  name: string,
  need: 'required' | 'optional',
): Promise<string | undefined> {
  const bytes = await files.read(name);
  if (bytes === undefined) {
    if (need === 'optional') return undefined;
    throw new LetheError('E_CHECKPOINT', 'is missing', files.pathOf(name));
  }
  return new TextDecoder().decode(bytes);
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
}

/** The parsed JSON file `name`, or `undefined` when there is none. */
async function readJson(files: ModelFiles, name: string): Promise<unknown> {
  const text = await readText(files, name, 'optional');
  return text === undefined ? undefined : parseJson(text, files.pathOf(name));
}

async function readTokenizer(
  files: ModelFiles,
  tokenizerConfig: unknown,
  need: 'required' | 'optional',
): Promise<Tokenizer | undefined> {
  const path = files.pathOf(TOKENIZER_FILE);
  const text = await readText(files, TOKENIZER_FILE, need);
  if (text === undefined) return undefined;
  const configPath = files.pathOf(TOKENIZER_CONFIG_FILE);
  try {
    return tokenizerFromJson(parseJson(text, path), tokenizerConfig ?? {}, {
      source: path,
      configSource: configPath,
    });
  } catch (error) {
    throw error instanceof LetheError && error.argument === configPath
      ? error
      : inFile(path, error);
  }
}

/**
 * The chat template of a directory: `chat_template.jinja` when there is one, else the
 * `chat_template` of `tokenizer_config.json`; `undefined` when neither exists, unless `need` is
 * `required` (then `E_CHECKPOINT` naming `tokenizer_config.json`).
 */
async function readChatTemplate(
  files: ModelFiles,
  tokenizerConfig: unknown,
  need: 'required' | 'optional',
): Promise<ChatTemplate | undefined> {
  const configPath = files.pathOf(TOKENIZER_CONFIG_FILE);
  const template = await readText(files, CHAT_TEMPLATE_FILE, 'optional');
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
    source: template === undefined ? configPath : files.pathOf(CHAT_TEMPLATE_FILE),
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
