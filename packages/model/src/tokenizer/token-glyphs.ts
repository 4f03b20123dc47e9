import type { Tokenizer } from './tokenizer';

const VISIBLE: Readonly<Record<string, string>> = { '\n': '⏎', '\t': '⇥', '\r': '␍' };

/**
 * One visible glyph string per token id of `ids`, for drawing which tokens a cache holds:
 * the token's text with newline, tab and carriage return drawn as `⏎`, `⇥`, `␍` and other
 * control characters as `?`; special tokens as `^` (BOS), `$` (EOS), `_` (pad) or `?`.
 * The glyphs of a character tokenizer are one character each. What `lethe generate` and the
 * browser example draw a cache's holdings with.
 *
 * @example
 * ```ts
 * tokenGlyphs(tokenizer, tokenizer.encode('a\nb')); // ['a', '⏎', 'b']
 * ```
 */
export function tokenGlyphs(tokenizer: Tokenizer, ids: ArrayLike<number>): string[] {
  return Array.from(ids, (id) => {
    if (id === tokenizer.bosId) return '^';
    if (id === tokenizer.eosId) return '$';
    if (id === tokenizer.padId) return '_';
    const text = tokenizer.decode([id], { skipSpecialTokens: true });
    if (text === '') return '?';
    return Array.from(text, (char) => VISIBLE[char] ?? (char < ' ' ? '?' : char)).join('');
  });
}
