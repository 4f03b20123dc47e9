import type { ChatTemplate, ContinuousBatcher, DecoderModel, Tokenizer } from '@lethe/model';

/** A model the server answers for, loaded at start-up from a directory it was given. */
export interface ServedModel {
  /** The id clients name in `model` (`GET /v1/models` lists it). */
  readonly id: string;
  readonly model: DecoderModel;
  readonly tokenizer: Tokenizer;
  /** Its chat template, when the directory has one (`/v1/chat/completions` needs it). */
  readonly chat: ChatTemplate | undefined;
  /** Token ids that end a sequence (the end-of-text ids). */
  readonly stopTokens: readonly number[];
  /**
   * Token ids of a prompt's text: a completion's as the tokenizer's post-processor encodes text
   * (a BOS where the model expects one), a chat's rendered template as it is (the template
   * writes its special tokens itself).
   */
  readonly encode: (text: string, kind: 'completion' | 'chat') => Int32Array;
  /**
   * Longest prompt text, in UTF-16 code units, that could fit the context (`promptCharLimit`):
   * longer is refused before tokenizing.
   */
  readonly maxPromptChars: number;
  /** Unix seconds it was loaded at. */
  readonly created: number;
  /** Sequences its batch can ever hold: those decoding at once plus those waiting. */
  readonly capacity: number;
  /** The running decode batch every request for this model joins. */
  readonly batcher: ContinuousBatcher;
  /** Called for each generated token with the ms since the sequence's previous one (or its arrival). */
  onToken?: (sinceLast: number, first: boolean) => void;
}
