import { checkObject } from '../option-checks';
import type { DecodeOptions, Tokenizer } from './tokenizer';

/**
 * Decodes generated tokens one at a time into text to print as it comes. Decoding each token
 * alone is wrong for byte-level tokenizers (Llama 3, Qwen2): a character of several UTF-8 bytes
 * may span tokens, and its first tokens alone decode to U+FFFD. A stream decodes the tokens
 * since the last newline together and returns only the new text, holding it back while it ends
 * inside a character (as transformers' `TextStreamer` does).
 *
 * @example
 * ```ts
 * const stream = new DecodeStream(tokenizer, { skipSpecialTokens: true });
 * onToken: (e) => { process.stdout.write(stream.step(e.token)); return true; }
 * process.stdout.write(stream.flush());
 * ```
 */
export class DecodeStream {
  private readonly tokenizer: Tokenizer;
  private readonly options: DecodeOptions;
  private ids: number[] = [];
  private emitted = 0;

  /**
   * @throws LetheError `E_ARG` naming `tokenizer` or `options` when they are not objects.
   */
  constructor(tokenizer: Tokenizer, options: DecodeOptions = {}) {
    checkObject(tokenizer, 'tokenizer', 'a Tokenizer');
    checkObject(options, 'options');
    this.tokenizer = tokenizer;
    this.options = { ...options };
  }

  /**
   * The text `id` adds: `''` while the text so far ends inside a character.
   *
   * @throws LetheError the tokenizer's `decode` errors (an id outside its vocabulary); the
   *   stream is then unchanged.
   */
  step(id: number): string {
    const ids = [...this.ids, id];
    const text = this.tokenizer.decode(ids, this.options);
    this.ids = ids;
    if (text.endsWith('\uFFFD')) return '';
    const added = text.slice(this.emitted);
    if (text.endsWith('\n')) {
      this.ids = [];
      this.emitted = 0;
    } else {
      this.emitted = text.length;
    }
    return added;
  }

  /** The text held back (an unfinished character decodes to U+FFFD); the stream starts afresh. */
  flush(): string {
    const rest = this.tokenizer.decode(this.ids, this.options).slice(this.emitted);
    this.ids = [];
    this.emitted = 0;
    return rest;
  }
}
