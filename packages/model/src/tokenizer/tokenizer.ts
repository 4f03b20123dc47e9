/** Options of {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /** Prepend the beginning-of-sequence token (default `false`). */
  addBos?: boolean;
  /** Append the end-of-sequence token (default `false`). */
  addEos?: boolean;
}

/** Options of {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Drop special tokens instead of writing their names, e.g. `<eos>` (default `false`). */
  skipSpecialTokens?: boolean;
}

/**
 * Text ↔ token ids. Ids are integers in `[0, vocabSize)`; the model's `vocab_size` must be
 * at least `vocabSize`.
 */
export interface Tokenizer {
  /** Number of distinct ids (special tokens included). */
  readonly vocabSize: number;
  /** Beginning-of-sequence id, if the tokenizer has one. */
  readonly bosId?: number;
  /** End-of-sequence id, if the tokenizer has one. */
  readonly eosId?: number;
  /** Padding id, if the tokenizer has one. */
  readonly padId?: number;
  /** Token ids of `text`. */
  encode(text: string, options?: EncodeOptions): Int32Array;
  /** Text of `ids`; throws `E_ARG` for an id outside `[0, vocabSize)`. */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
  /** A JSON-serialisable description from which the tokenizer can be rebuilt. */
  toJSON(): object;
}
