import { Tokenizer as TokenizerEngine } from '@huggingface/tokenizers';
import { LetheError } from '@lethe/core';
import { checkObject, kindOf } from '../option-checks';
import { specialTokenText, TOKENIZER_CONFIG_FILE } from './special-tokens';
import type { DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer';

/** File name of a Hugging Face tokenizer (and of Lethe's character tokenizer's JSON form). */
export const TOKENIZER_FILE = 'tokenizer.json';

/** Options of {@link HfTokenizer.encode}. */
export interface HfEncodeOptions extends EncodeOptions {
  /**
   * Add the special tokens the tokenizer's post-processor adds — what transformers'
   * `add_special_tokens=True` does, e.g. Llama 3's `<|begin_of_text|>` (default `false`). Not
   * together with `addBos` / `addEos`, which would add them twice.
   */
  addSpecialTokens?: boolean;
}

/** Options of the {@link HfTokenizer} constructor. */
export interface HfTokenizerOptions {
  /** How errors name `tokenizer.json` (default `tokenizer.json`), e.g. its path. */
  readonly source?: string;
  /** How errors name `tokenizer_config.json` (default `tokenizer_config.json`), e.g. its path. */
  readonly configSource?: string;
}

/** JSON form of an {@link HfTokenizer}: the contents of the two files it was built from. */
export interface HfTokenizerJson {
  type: 'hf';
  /** The parsed `tokenizer.json`. */
  tokenizer: object;
  /** The parsed `tokenizer_config.json`. */
  config: object;
}

/**
 * A Hugging Face tokenizer (`tokenizer.json`, e.g. the byte-level BPE of Llama 3 and Qwen2, or
 * any model, normalizer, pre-tokenizer and decoder it declares) behind Lethe's
 * {@link Tokenizer} interface. Encoding and decoding are done by `@huggingface/tokenizers`,
 * Hugging Face's pure-JavaScript port of its tokenizers library (Node and browsers).
 *
 * The BOS, EOS and padding ids are those of `tokenizer_config.json`'s `bos_token`,
 * `eos_token` and `pad_token` (a Qwen2 tokenizer has no BOS). Special tokens written in the
 * text (`<|im_start|>`, …) encode as their ids, as in transformers — which is how the text of a
 * rendered chat template becomes its ids.
 *
 * The parsed JSON objects are kept, not copied: do not modify them afterwards.
 *
 * @example
 * ```ts
 * const tokenizer = new HfTokenizer(JSON.parse(tokenizerJson), JSON.parse(tokenizerConfigJson));
 * const ids = tokenizer.encode('<|im_start|>user\nhi<|im_end|>\n');
 * tokenizer.decode(ids, { skipSpecialTokens: true }); // 'user\nhi\n'
 * ```
 */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | undefined;
  readonly eosId: number | undefined;
  readonly padId: number | undefined;
  /** The special tokens (added tokens marked `special`), text to id. */
  readonly specialTokens: ReadonlyMap<string, number>;
  private readonly engine: TokenizerEngine;
  private readonly json: HfTokenizerJson;

  /**
   * @param tokenizer the parsed `tokenizer.json`.
   * @param config the parsed `tokenizer_config.json` (default `{}`: no BOS, EOS or padding).
   * @throws LetheError `E_FORMAT` naming `options.source` when `tokenizer` is not an object
   *   with a `model` object or `@huggingface/tokenizers` cannot build it (an unknown model or
   *   component type, …); `E_FORMAT` naming `options.configSource` when `config` is not an
   *   object or its `bos_token` / `eos_token` / `pad_token` is not a token of the vocabulary;
   *   `E_ARG` naming `options` when it is not an object.
   */
  constructor(tokenizer: unknown, config: unknown = {}, options: HfTokenizerOptions = {}) {
    checkObject(options, 'options');
    const source = options.source ?? TOKENIZER_FILE;
    const configSource = options.configSource ?? TOKENIZER_CONFIG_FILE;
    if (!isRecord(tokenizer) || !isRecord(tokenizer.model)) {
      throw new LetheError(
        'E_FORMAT',
        `must be a Hugging Face tokenizer (a JSON object with a "model" object), got ${kindOf(tokenizer)}`,
        source,
      );
    }
    if (!isRecord(config)) {
      throw new LetheError(
        'E_FORMAT',
        `must be a JSON object, got ${kindOf(config)}`,
        configSource,
      );
    }
    try {
      this.engine = new TokenizerEngine(
        {
          normalizer: null,
          pre_tokenizer: null,
          post_processor: null,
          decoder: null,
          added_tokens: [],
          ...tokenizer,
        },
        config,
      );
    } catch (error) {
      throw new LetheError(
        'E_FORMAT',
        `cannot be loaded by @huggingface/tokenizers: ${(error as Error).message}`,
        source,
      );
    }
    let size = 0;
    for (const id of this.engine.get_vocab(true).values()) size = Math.max(size, id + 1);
    this.vocabSize = size;
    const idOf = (field: string): number | undefined => {
      const text = specialTokenText(config, field, configSource);
      if (text === undefined) return undefined;
      const id = this.engine.token_to_id(text);
      if (id === undefined) {
        throw new LetheError(
          'E_FORMAT',
          `${field} ${JSON.stringify(text)} is not a token of ${source}`,
          configSource,
        );
      }
      return id;
    };
    this.bosId = idOf('bos_token');
    this.eosId = idOf('eos_token');
    this.padId = idOf('pad_token');
    const special = new Map<string, number>();
    for (const [id, token] of this.engine.get_added_tokens_decoder()) {
      if (token.special) special.set(token.content, id);
    }
    this.specialTokens = special;
    this.json = { type: 'hf', tokenizer, config };
  }

  /**
   * Rebuilds a tokenizer from {@link HfTokenizer.toJSON} output.
   *
   * @throws LetheError `E_FORMAT` naming `tokenizer` unless `json` is `{type: "hf", tokenizer,
   *   config}`; the constructor's errors.
   */
  static fromJSON(json: unknown): HfTokenizer {
    if (!isRecord(json) || json.type !== 'hf') {
      throw new LetheError('E_FORMAT', 'expected {type: "hf", tokenizer, config}', 'tokenizer');
    }
    return new HfTokenizer(json.tokenizer, json.config);
  }

  /**
   * Ids of `text`, optionally framed by the BOS / EOS ids, or with the special tokens the
   * post-processor adds (`addSpecialTokens`).
   *
   * @throws LetheError `E_ARG` naming `text` when it is not a string; naming `options.addBos` /
   *   `options.addEos` when the tokenizer has no such token; naming `options.addSpecialTokens`
   *   when it is combined with `addBos` or `addEos`; `E_ARG` naming `text` when a piece of it has
   *   no id (a tokenizer without byte fallback or unknown token).
   */
  encode(text: string, options: HfEncodeOptions = {}): Int32Array {
    if (typeof text !== 'string') throw new LetheError('E_ARG', 'must be a string', 'text');
    checkObject(options, 'options');
    if (options.addSpecialTokens && (options.addBos || options.addEos)) {
      throw new LetheError(
        'E_ARG',
        'adds the special tokens of the post-processor; it cannot be combined with addBos or addEos',
        'options.addSpecialTokens',
      );
    }
    const bos = options.addBos ? this.requireId(this.bosId, 'BOS', 'addBos') : undefined;
    const eos = options.addEos ? this.requireId(this.eosId, 'EOS', 'addEos') : undefined;
    const encoding = this.engine.encode(text, {
      add_special_tokens: options.addSpecialTokens ?? false,
    });
    const ids = encoding.ids as (number | undefined)[];
    const out = new Int32Array(
      ids.length + (bos === undefined ? 0 : 1) + (eos === undefined ? 0 : 1),
    );
    let at = 0;
    if (bos !== undefined) out[at++] = bos;
    ids.forEach((id, i) => {
      if (id === undefined) {
        throw new LetheError(
          'E_ARG',
          `the piece ${JSON.stringify(encoding.tokens[i])} has no id in this vocabulary`,
          'text',
        );
      }
      out[at++] = id;
    });
    if (eos !== undefined) out[at] = eos;
    return out;
  }

  /**
   * Text of `ids` as `@huggingface/tokenizers` decodes them (byte-level tokens back to UTF-8;
   * a token sequence that ends inside a character decodes to U+FFFD), special tokens written as
   * their text unless `skipSpecialTokens`.
   *
   * @throws LetheError `E_ARG` naming `ids` for an id that is not an integer in
   *   `[0, vocabSize)` or has no token.
   */
  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    checkObject(options, 'options');
    const list: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (
        !Number.isInteger(id) ||
        id < 0 ||
        id >= this.vocabSize ||
        this.engine.id_to_token(id) === undefined
      ) {
        throw new LetheError(
          'E_ARG',
          `id ${id} at index ${i} is not a token id (the vocabulary has ${this.vocabSize} ids)`,
          'ids',
        );
      }
      list.push(id);
    }
    if (list.length === 0) return '';
    return this.engine.decode(list, { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  /** The JSON form: `{type: "hf", tokenizer, config}` (the objects given, not copies). */
  toJSON(): HfTokenizerJson {
    return this.json;
  }

  private requireId(id: number | undefined, name: string, option: string): number {
    if (id === undefined) {
      throw new LetheError(
        'E_ARG',
        `the tokenizer has no ${name} token (${TOKENIZER_CONFIG_FILE} sets no ${name.toLowerCase()}_token)`,
        `options.${option}`,
      );
    }
    return id;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
