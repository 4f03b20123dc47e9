import { describe, expect, it } from 'vitest';
import { CharTokenizer, tokenGlyphs } from '../../src/index';

describe('tokenGlyphs', () => {
  const tokenizer = new CharTokenizer('ab \n\t');

  it('draws each token as its text, with whitespace controls visible and specials as marks', () => {
    const ids = tokenizer.encode('a b\n\tb', { addBos: true });
    expect(tokenGlyphs(tokenizer, ids)).toEqual(['^', 'a', ' ', 'b', '⏎', '⇥', 'b']);
    expect(tokenGlyphs(tokenizer, [tokenizer.eosId!, tokenizer.padId!])).toEqual(['$', '_']);
  });
});
