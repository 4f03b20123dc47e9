import { CharTokenizer, type DecodeOptions, type EncodeOptions } from '@lethe/model';
import { TAG_MARKUP } from '../interoception';

const { open: OPEN, close: CLOSE, openChar: OPEN_TOKEN, closeChar: CLOSE_TOKEN } = TAG_MARKUP;

/**
 * A character tokenizer that reads the tag's markup strings `<eviction_rate>` and
 * `</eviction_rate>` as one token each (the characters `⟨` and `⟩` of its alphabet); `decode`
 * writes them back, so `decode(encode(text)) === text`. Its `tokenizer.json` is the plain
 * character alphabet: rebuild one from a saved alphabet with
 * `interoceptionTokenizer(saved, 'markup')`.
 */
export class TagMarkupTokenizer extends CharTokenizer {
  override encode(text: string, options?: EncodeOptions): Int32Array {
    return super.encode(text.replaceAll(OPEN, OPEN_TOKEN).replaceAll(CLOSE, CLOSE_TOKEN), options);
  }

  override decode(ids: ArrayLike<number>, options?: DecodeOptions): string {
    return super.decode(ids, options).replaceAll(OPEN_TOKEN, OPEN).replaceAll(CLOSE_TOKEN, CLOSE);
  }
}
