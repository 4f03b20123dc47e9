import { LetheError } from '@lethe/core';
import type { DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer';

/** Special tokens of {@link CharTokenizer}, with ids 0…3 in this order. */
export const CHAR_SPECIAL_TOKENS = ['<pad>', '<bos>', '<eos>', '<unk>'] as const;

/** What {@link CharTokenizer.encode} does with a character outside the alphabet. */
export type UnknownCharPolicy = 'unk' | 'error';

/** Options of the {@link CharTokenizer} constructors. */
export interface CharTokenizerOptions {
  /** `unk` (default): encode as `<unk>`; `error`: throw `E_ARG`. */
  unknown?: UnknownCharPolicy;
}

/** JSON form of a {@link CharTokenizer} (see {@link CharTokenizer.fromJSON}). */
export interface CharTokenizerJson {
  type: 'char';
  version: 1;
  /** The alphabet: one token per code point, ids from 4 in this order. */
  alphabet: string;
  unknown: UnknownCharPolicy;
}

const PAD_ID = 0;
const BOS_ID = 1;
const EOS_ID = 2;
const UNK_ID = 3;

/**
 * A character-level tokenizer: one token per Unicode code point of an alphabet, after the
 * special tokens `<pad>`=0, `<bos>`=1, `<eos>`=2, `<unk>`=3 (so `vocabSize` = 4 + alphabet
 * size). Decoding the encoding of text over the alphabet gives the text back.
 *
 * @example
 * ```ts
 * const tok = CharTokenizer.fromText('hello world');
 * tok.encode('hello', { addBos: true }); // Int32Array [1, ...]
 * const same = CharTokenizer.fromJSON(JSON.parse(JSON.stringify(tok)));
 * ```
 */
export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly padId = PAD_ID;
  readonly bosId = BOS_ID;
  readonly eosId = EOS_ID;
  /** Id of `<unk>`. */
  readonly unkId = UNK_ID;
  /** The alphabet's characters (code points), in id order from 4. */
  readonly alphabet: readonly string[];
  /** Handling of characters outside the alphabet. */
  readonly unknown: UnknownCharPolicy;
  private readonly ids: Map<string, number>;

  /**
   * @param alphabet The characters, each once, in id order (code points; e.g. an emoji is
   *   one character).
   * @throws LetheError `E_ARG` for a repeated character, a lone UTF-16 surrogate (not a
   *   character), or an unknown `options.unknown`.
   */
  constructor(alphabet: string, options: CharTokenizerOptions = {}) {
    if (typeof alphabet !== 'string') throw new LetheError('E_ARG', 'must be a string', 'alphabet');
    const unknown = options.unknown ?? 'unk';
    if (unknown !== 'unk' && unknown !== 'error') {
      throw new LetheError('E_ARG', `must be "unk" or "error", got ${String(unknown)}`, 'unknown');
    }
    const chars = Array.from(alphabet);
    const ids = new Map<string, number>();
    chars.forEach((char, i) => {
      if (isLoneSurrogate(char)) {
        throw new LetheError('E_ARG', `lone UTF-16 surrogate at character ${i}`, 'alphabet');
      }
      if (ids.has(char)) {
        throw new LetheError(
          'E_ARG',
          `character ${JSON.stringify(char)} appears twice`,
          'alphabet',
        );
      }
      ids.set(char, CHAR_SPECIAL_TOKENS.length + i);
    });
    this.alphabet = Object.freeze(chars);
    this.unknown = unknown;
    this.ids = ids;
    this.vocabSize = CHAR_SPECIAL_TOKENS.length + chars.length;
  }

  /** A tokenizer whose alphabet is the distinct characters of `text`, sorted by code point. */
  static fromText(text: string, options: CharTokenizerOptions = {}): CharTokenizer {
    if (typeof text !== 'string') throw new LetheError('E_ARG', 'must be a string', 'text');
    const distinct = [...new Set(Array.from(text))];
    distinct.sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!);
    return new CharTokenizer(distinct.join(''), options);
  }

  /**
   * Rebuilds a tokenizer from {@link CharTokenizer.toJSON} output.
   *
   * @throws LetheError `E_FORMAT` if `json` is not a version-1 char tokenizer description.
   */
  static fromJSON(json: unknown): CharTokenizer {
    const value = (
      typeof json === 'object' && json !== null ? json : {}
    ) as Partial<CharTokenizerJson>;
    if (value.type !== 'char' || value.version !== 1) {
      throw new LetheError('E_FORMAT', 'expected {type: "char", version: 1, ...}', 'tokenizer');
    }
    if (typeof value.alphabet !== 'string') {
      throw new LetheError('E_FORMAT', 'alphabet must be a string', 'tokenizer');
    }
    try {
      return new CharTokenizer(value.alphabet, { unknown: value.unknown ?? 'unk' });
    } catch (error) {
      throw new LetheError('E_FORMAT', (error as Error).message, 'tokenizer');
    }
  }

  /**
   * Ids of the characters of `text`, optionally framed by `<bos>` / `<eos>`.
   *
   * @throws LetheError `E_ARG` naming the character and its index when it is outside the
   *   alphabet and `unknown` is `error`.
   */
  encode(text: string, options: EncodeOptions = {}): Int32Array {
    if (typeof text !== 'string') throw new LetheError('E_ARG', 'must be a string', 'text');
    const chars = Array.from(text);
    const bos = options.addBos ? 1 : 0;
    const out = new Int32Array(bos + chars.length + (options.addEos ? 1 : 0));
    if (options.addBos) out[0] = BOS_ID;
    chars.forEach((char, i) => {
      const id = this.ids.get(char);
      if (id === undefined && this.unknown === 'error') {
        throw new LetheError(
          'E_ARG',
          `character ${JSON.stringify(char)} at index ${i} is not in the alphabet`,
          'text',
        );
      }
      out[bos + i] = id ?? UNK_ID;
    });
    if (options.addEos) out[out.length - 1] = EOS_ID;
    return out;
  }

  /**
   * Text of `ids`: alphabet characters as themselves, special tokens as their names
   * (`<eos>`) unless `skipSpecialTokens`.
   *
   * @throws LetheError `E_ARG` for an id that is not an integer in `[0, vocabSize)`.
   */
  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    let text = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new LetheError(
          'E_ARG',
          `id ${id} at index ${i} is not in [0, ${this.vocabSize})`,
          'ids',
        );
      }
      if (id >= CHAR_SPECIAL_TOKENS.length) text += this.alphabet[id - CHAR_SPECIAL_TOKENS.length];
      else if (!options.skipSpecialTokens) text += CHAR_SPECIAL_TOKENS[id];
    }
    return text;
  }

  /** The JSON form: `{type: "char", version: 1, alphabet, unknown}`. */
  toJSON(): CharTokenizerJson {
    return { type: 'char', version: 1, alphabet: this.alphabet.join(''), unknown: this.unknown };
  }
}

function isLoneSurrogate(char: string): boolean {
  const code = char.charCodeAt(0);
  return char.length === 1 && code >= 0xd800 && code <= 0xdfff;
}
